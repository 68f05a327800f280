package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/TarsCloud/TarsGo/tars"
	"github.com/TarsCloud/TarsGo/tars/model"
	"github.com/TarsCloud/TarsGo/tars/protocol"
	"github.com/TarsCloud/TarsGo/tars/protocol/res/requestf"
	"github.com/TarsCloud/TarsGo/tars/util/tools"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
)

// TarsGo keeps its configuration in a process-wide application, built on first use from the
// file named by -config in os.Args or by tars.ServerConfigPath. The load generator has no
// such file, so the first Communicator is made with os.Args hidden (TarsGo would otherwise
// parse the load generator's own flags).
var tarsgoComm = sync.OnceValue(func() *tars.Communicator {
	tarsgoLimit()
	args := os.Args
	os.Args = args[:1]
	defer func() { os.Args = args }()
	return tars.NewCommunicator()
})

// tarsgoLimit raises TarsGo's packet limit, one process-wide variable read by its client and
// server (10 MiB by default; its server sets it from maxPackageLength in the configuration,
// which tarsgoConfig gives the same value), to MaxFrame, once, before TarsGo reads it.
var tarsgoLimit = sync.OnceFunc(func() { protocol.SetMaxPackageLength(MaxFrame) })

// tarsgoClient calls as the code TarsGo's protobuf generator writes does: proto.Marshal the
// request, ServantProxy.TarsInvoke, proto.Unmarshal the reply's buffer.
type tarsgoClient struct {
	prx tarsgoProxy
}

// tarsgoProxy receives the ServantProxy from Communicator.StringToProxy, like a generated
// proxy (tars.ProxyPrx).
type tarsgoProxy struct{ s model.Servant }

func (p *tarsgoProxy) SetServant(s model.Servant) { p.s = s }

func newTarsgoClient(cfg ClientConfig) (Client, error) {
	eps, err := tarsEndpoints(cfg.Addrs)
	if err != nil {
		return nil, err
	}
	c := &tarsgoClient{}
	tarsgoComm().StringToProxy(cfg.Servant+"@"+eps, &c.prx)
	c.prx.s.TarsSetTimeout(int(cfg.Timeout / time.Millisecond))
	return c, nil
}

func (c *tarsgoClient) Close() error { return nil } // TarsGo has no way to close a proxy

func (c *tarsgoClient) NewCaller(_ int, payload []byte) Caller {
	return &tarsgoCaller{s: c.prx.s, payload: payload}
}

type tarsgoCaller struct {
	s       model.Servant
	payload []byte
	req     echopb.EchoReq
	rsp     echopb.EchoRsp
	resp    requestf.ResponsePacket
}

func (c *tarsgoCaller) Call(seq uint64) error {
	c.req.Data, c.req.Seq = c.payload, seq
	in, err := proto.Marshal(&c.req)
	if err != nil {
		return err
	}
	if err := c.s.TarsInvoke(context.Background(), 0, Method, in, nil, nil, &c.resp); err != nil {
		return err
	}
	if err := proto.Unmarshal(tools.Int8ToByte(c.resp.SBuffer), &c.rsp); err != nil {
		return err
	}
	return checkReply(seq, c.payload, &c.rsp)
}

// tarsgoDispatcher is the server side of the protobuf servant, as TarsGo's generated
// Dispatch methods are: decode the request body, call the implementation, encode the reply.
type tarsgoDispatcher struct{}

func (tarsgoDispatcher) Dispatch(ctx context.Context, _ any, req *requestf.RequestPacket, rsp *requestf.ResponsePacket, _ bool) error {
	if req.SFuncName != Method {
		return &tars.Error{Code: -3, Message: "no such function: " + req.SFuncName}
	}
	var in echopb.EchoReq
	if err := proto.Unmarshal(tools.Int8ToByte(req.SBuffer), &in); err != nil {
		return err
	}
	out, err := proto.Marshal(&echopb.EchoRsp{Data: in.Data, Seq: in.Seq})
	if err != nil {
		return err
	}
	rsp.IVersion = req.IVersion
	rsp.CPacketType = 0
	rsp.IRequestId = req.IRequestId
	rsp.IMessageType = 0
	rsp.IRet = 0
	rsp.SBuffer = tools.ByteToInt8(out)
	rsp.SResultDesc = ""
	return nil
}

// tarsgoConfig is a minimal TarsGo server configuration: one adapter for the echo servant,
// the packet limit raised to MaxFrame, TarsGo's defaults for everything else (a goroutine per request, its TCP settings), no
// registry, node, stat or log services.
const tarsgoConfig = `<tars>
  <application>
    <server>
      app=Bench
      server=EchoServer
      logLevel=ERROR
      gracedowntimeout=1000
      maxPackageLength=%d
      <Bench.EchoServer.EchoObjAdapter>
        endpoint=tcp -h %s -p %s -t 60000
        servant=Bench.EchoServer.EchoObj
        protocol=tars
      </Bench.EchoServer.EchoObjAdapter>
    </server>
  </application>
</tars>
`

type tarsgoServer struct{ addr string }

var tarsgoStarted sync.Once

// startTarsgoServer runs TarsGo's application (tars.Run) in the background; a process can run
// one, and it stops with the process.
func startTarsgoServer(addr string, _ ServerConfig) (Server, error) {
	started := false
	tarsgoStarted.Do(func() { started = true })
	if !started {
		return nil, errors.New("peer: TarsGo runs one server per process")
	}
	addr, err := concreteAddr(addr)
	if err != nil {
		return nil, err
	}
	host, port, err := splitHostPort(addr)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "tarsgo-echo-*.conf")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := fmt.Fprintf(f, tarsgoConfig, MaxFrame, host, port); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	tarsgoLimit()
	tars.ServerConfigPath = f.Name()
	tars.GetServerConfig() // reads the file, as a TarsGo main does before AddServant
	tars.AddServant(tarsgoDispatcher{}, struct{}{}, Servant)
	go tars.Run()
	if err := waitListening(addr, 10*time.Second); err != nil {
		return nil, err
	}
	return tarsgoServer{addr}, nil
}

func (t tarsgoServer) Addr() string { return t.addr }
func (t tarsgoServer) Stop()        {} // TarsGo's application stops with the process
