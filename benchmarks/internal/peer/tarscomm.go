package peer

import (
	"context"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
)

// tarscommClient calls through one Communicator and one ServantProxy, untyped
// (ServantProxy.Invoke and AsyncInvoke): what a generated proxy wraps.
type tarscommClient struct {
	comm *communicator.Communicator
	sp   servantproxy.ServantProxy
}

func newTarscommClient(cfg ClientConfig) (Client, error) {
	c := conf.Default()
	if cfg.Conf != "" {
		var err error
		if c, err = conf.Load(cfg.Conf); err != nil {
			return nil, err
		}
	}
	if cfg.NetThreads > 0 {
		c.NetThread = cfg.NetThreads
	}
	c.SyncInvokeTimeout = cfg.Timeout
	c.AsyncInvokeTimeout = cfg.Timeout
	if cfg.Conf == "" { // a file's asyncqueuecap is kept: it is one of the knobs measured
		c.AsyncQueueCap = max(c.AsyncQueueCap, 2*cfg.Concurrency)
	}
	c.MaxPacketSize = MaxFrame
	// send-buffer-limit fails calls at once when a connection holds more unsent bytes than
	// this (its default, 32 MiB, is four 8 MiB requests): let every caller's request wait, as
	// a user sending such calls would, and as the other clients do (they have no such limit).
	c.SendBufferLimit = min(max(c.SendBufferLimit, cfg.Concurrency*(cfg.Payload+4<<10)), 1<<30)
	var opts []communicator.Option
	if cfg.NoStats {
		opts = append(opts, communicator.WithoutStats())
	}
	comm, err := communicator.New(c, opts...)
	if err != nil {
		return nil, err
	}
	eps, err := tarsEndpoints(cfg.Addrs)
	if err != nil {
		comm.Close()
		return nil, err
	}
	cl := &tarscommClient{comm: comm}
	if err := comm.StringToProxy(cfg.Servant+"@"+eps, &cl.sp); err != nil {
		comm.Close()
		return nil, err
	}
	return cl, nil
}

func (c *tarscommClient) Close() error { return c.comm.Close() }

func (c *tarscommClient) NewCaller(_ int, payload []byte) Caller {
	return &tarscommCaller{sp: &c.sp, payload: payload}
}

type tarscommCaller struct {
	sp      *servantproxy.ServantProxy
	payload []byte
	req     echopb.EchoReq
	rsp     echopb.EchoRsp
}

func (c *tarscommCaller) Call(seq uint64) error {
	c.req.Data, c.req.Seq = c.payload, seq
	if err := c.sp.Invoke(context.Background(), Method, &c.req, &c.rsp); err != nil {
		return err
	}
	return checkReply(seq, c.payload, &c.rsp)
}

func (c *tarscommClient) NewSlot(_ int, payload []byte, done func(error)) Slot {
	s := &tarscommSlot{sp: &c.sp, payload: payload}
	// One callback per slot, made once: a call allocates nothing for it.
	s.cb = func(err error) {
		if err == nil {
			err = checkReply(s.seq, s.payload, &s.rsp)
		}
		done(err)
	}
	return s
}

type tarscommSlot struct {
	sp      *servantproxy.ServantProxy
	payload []byte
	seq     uint64
	req     echopb.EchoReq
	rsp     echopb.EchoRsp
	cb      func(error)
}

func (s *tarscommSlot) Start(seq uint64) error {
	s.seq = seq
	s.req.Data, s.req.Seq = s.payload, seq
	return s.sp.AsyncInvoke(context.Background(), Method, &s.req, &s.rsp, s.cb)
}

// tarscommServer is tarscomm's gnet server with handlers inline on the event loops (the
// default, and its fastest mode for handlers that never block).
type tarscommServer struct{ s *server.Server }

// noBacklogCap lifts the server's cap on a connection's unsent replies (server.WithMaxBacklog,
// 256 MiB): with 64 callers of 8 MiB a client may hold 512 MiB of replies in flight, and the
// other servers measured close no connection for that (TarsCpp's slow-reader rule stays on:
// it closes only a client that reads nothing).
var noBacklogCap = server.WithMaxBacklog(0)

func startTarscommServer(addr string, cfg ServerConfig) (Server, error) {
	s := server.New(server.WithNumEventLoop(cfg.Loops), server.WithMaxPacketSize(MaxFrame), noBacklogCap)
	if err := server.HandleProto(s, Servant, Method, echoTarscomm); err != nil {
		return nil, err
	}
	if _, err := s.Start(addr); err != nil {
		return nil, err
	}
	return tarscommServer{s}, nil
}

func echoTarscomm(_ context.Context, _ *server.Current, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
	return &echopb.EchoRsp{Data: req.Data, Seq: req.Seq}, nil
}

func (t tarscommServer) Addr() string { return t.s.Addr().String() }

func (t tarscommServer) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = t.s.Stop(ctx)
}
