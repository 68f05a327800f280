package peer

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
	"github.com/tarscomm/tarscomm/benchmarks/internal/tarswire"
)

// The stdlib client is the baseline: the least a pipelined TARS client on net.Conn needs.
// One connection per address, shared by every caller; callers append framed requests to the
// connection's output buffer and wake its writer goroutine (once per batch); its reader
// goroutine decodes the replies and hands each to its caller by request id (a caller's id is
// its worker number: one call in flight each). Timeouts use one reusable timer per caller.
// It has no reconnect, no load balancing and no pooling beyond that. The writer and the
// reader loop are shared with the stdlib server (stdlib_conn.go); the client with that server
// is the floor.
//
// Large messages cost one copy each way in the client: a body of stdlibInlineMax bytes or more
// is not copied into the output buffer but written from the caller's own buffer, between its
// frame's head and tail, in one vectored write (writev) with the rest of the batch; a reply
// is read straight into a buffer that holds whole frames (grown once to the largest), and
// proto.Unmarshal copies its payload out.

var (
	errStdlibTimeout = errors.New("stdlib: call timed out")
	errStdlibClosed  = errors.New("stdlib: connection closed")
)

const stdlibMaxFrame = MaxFrame

type stdlibClient struct {
	conns     []*stdConn
	servant   string
	timeout   time.Duration
	timeoutMS int32
}

func newStdlibClient(cfg ClientConfig) (Client, error) {
	c := &stdlibClient{servant: cfg.Servant, timeout: cfg.Timeout, timeoutMS: int32(cfg.Timeout / time.Millisecond)}
	for _, a := range cfg.Addrs {
		nc, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			c.Close()
			return nil, err
		}
		sc := &stdConn{
			nc:      nc,
			w:       newFrameWriter(nc),
			done:    make(chan struct{}),
			callers: make([]atomic.Pointer[stdCaller], cfg.Concurrency+1),
		}
		go sc.writeLoop()
		go sc.readLoop()
		c.conns = append(c.conns, sc)
	}
	return c, nil
}

func (c *stdlibClient) Close() error {
	for _, sc := range c.conns {
		sc.close()
	}
	return nil
}

func (c *stdlibClient) NewCaller(worker int, payload []byte) Caller {
	sc := c.conns[worker%len(c.conns)]
	id := worker + 1
	if id >= len(sc.callers) {
		panic(fmt.Sprintf("stdlib: caller %d beyond the configured concurrency %d", worker, len(sc.callers)-1))
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	cl := &stdCaller{c: c, sc: sc, id: int32(id), payload: payload, replies: make(chan stdReply, 4), timer: t}
	sc.callers[id].Store(cl)
	return cl
}

type stdConn struct {
	nc      net.Conn
	w       *frameWriter
	done    chan struct{}
	once    sync.Once
	closed  atomic.Bool
	callers []atomic.Pointer[stdCaller] // by request id
}

func (sc *stdConn) close() {
	sc.once.Do(func() {
		sc.closed.Store(true)
		close(sc.done)
		sc.nc.Close()
	})
}

// send queues one request and wakes the writer if nothing was queued. A large body is
// written from body itself, which must not change until the reply (or, if none comes, must
// be left to the writer: the caller then drops it).
func (sc *stdConn) send(id int32, servant string, body []byte, timeoutMS int32) error {
	if sc.closed.Load() {
		return errStdlibClosed
	}
	out := sc.w.begin()
	if len(body) < stdlibInlineMax {
		out = tarswire.AppendRequest(out, id, servant, Method, body, timeoutMS)
	} else {
		out = tarswire.AppendRequestHead(out, id, servant, Method, len(body), timeoutMS)
		out = sc.w.attach(out, body)
		out = tarswire.AppendRequestTail(out, timeoutMS)
	}
	if sc.w.end(out) {
		sc.w.signal()
	}
	return nil
}

// writeLoop writes each batch of requests queued since the last (frameWriter.run).
func (sc *stdConn) writeLoop() {
	if sc.w.run(sc.done, nil) != nil {
		sc.close()
	}
}

func (sc *stdConn) readLoop() {
	defer sc.close()
	var rsp echopb.EchoRsp
	var r tarswire.Response
	_ = readFrames(sc.nc, stdlibMaxFrame, func(frame []byte) error {
		sc.deliver(frame, &r, &rsp)
		return nil
	}, nil)
}

// deliver decodes one reply and hands its outcome to its caller.
func (sc *stdConn) deliver(frame []byte, r *tarswire.Response, rsp *echopb.EchoRsp) {
	if err := tarswire.DecodeResponse(frame, r); err != nil {
		return
	}
	if r.RequestID <= 0 || int(r.RequestID) >= len(sc.callers) {
		return
	}
	cl := sc.callers[r.RequestID].Load()
	if cl == nil {
		return
	}
	var rep stdReply
	switch {
	case r.Ret != 0:
		rep.err = fmt.Errorf("stdlib: server returned %d: %s", r.Ret, r.Desc)
		rep.seq = cl.seq.Load()
	default:
		if err := proto.Unmarshal(r.Body, rsp); err != nil {
			rep.err = err
			rep.seq = cl.seq.Load()
		} else {
			// Unmarshal gave Data its own array: the caller compares it, off the reader.
			rep.seq, rep.data = rsp.Seq, rsp.Data
		}
	}
	select {
	case cl.replies <- rep:
	default: // the caller has stale replies queued; it will time out
	}
}

type stdReply struct {
	seq  uint64
	data []byte // the echoed payload, if err is nil
	err  error
}

type stdCaller struct {
	c       *stdlibClient
	sc      *stdConn
	id      int32
	payload []byte
	seq     atomic.Uint64 // of the call in flight, for replies that carry no body
	req     echopb.EchoReq
	body    []byte
	replies chan stdReply
	timer   *time.Timer
}

func (cl *stdCaller) Call(seq uint64) error {
	cl.req.Data, cl.req.Seq = cl.payload, seq
	cl.seq.Store(seq)
	body, err := proto.MarshalOptions{}.MarshalAppend(cl.body[:0], &cl.req)
	if err != nil {
		return err
	}
	cl.body = body
	if err := cl.sc.send(cl.id, cl.c.servant, body, cl.c.timeoutMS); err != nil {
		return err
	}
	cl.timer.Reset(cl.c.timeout)
	defer cl.timer.Stop()
	for {
		select {
		case rep := <-cl.replies:
			if rep.seq < seq && rep.err == nil {
				continue // the late reply of a call that timed out
			}
			if rep.err != nil {
				return rep.err
			}
			return check(seq, cl.payload, rep.seq, rep.data)
		case <-cl.timer.C:
			cl.body = nil // the writer may still be writing it
			return errStdlibTimeout
		case <-cl.sc.done:
			cl.body = nil
			return errStdlibClosed
		}
	}
}
