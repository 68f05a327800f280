package peer

import (
	"context"
	"net"
	"time"

	"github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/connpool"
	"github.com/cloudwego/kitex/pkg/klog"
	kserver "github.com/cloudwego/kitex/server"

	"github.com/tarscomm/tarscomm/benchmarks/kitex_gen/kbench"
	"github.com/tarscomm/tarscomm/benchmarks/kitex_gen/kbench/echo"
)

// Kitex runs in two modes, each with its own server: "kitex", Kitex's default transport with
// a pool of long connections (sized to the number of callers, as Kitex's own benchmarks
// do, so that no caller waits for or churns a connection), and "kitex-mux", its multiplexed
// transport (several calls in flight on each connection).

type kitexEcho struct{}

func (*kitexEcho) Echo(_ context.Context, req *kbench.EchoReq) (*kbench.EchoRsp, error) {
	return &kbench.EchoRsp{Data: req.Data, Seq: req.Seq}, nil
}

type kitexServer struct {
	addr string
	stop func() error
}

func startKitexPoolServer(addr string, _ ServerConfig) (Server, error) {
	return startKitexServer(addr)
}

func startKitexMuxServer(addr string, _ ServerConfig) (Server, error) {
	return startKitexServer(addr, kserver.WithMuxTransport())
}

func startKitexServer(addr string, opts ...kserver.Option) (Server, error) {
	klog.SetLevel(klog.LevelError)
	addr, err := concreteAddr(addr)
	if err != nil {
		return nil, err
	}
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	opts = append(opts, kserver.WithServiceAddr(tcp), kserver.WithExitWaitTime(time.Second))
	svr := echo.NewServer(&kitexEcho{}, opts...)
	errc := make(chan error, 1)
	go func() { errc <- svr.Run() }()
	if err := waitListening(addr, 10*time.Second); err != nil {
		select {
		case runErr := <-errc:
			return nil, runErr
		default:
			return nil, err
		}
	}
	return kitexServer{addr: addr, stop: svr.Stop}, nil
}

func (k kitexServer) Addr() string { return k.addr }
func (k kitexServer) Stop()        { _ = k.stop() }

type kitexClient struct {
	cli echo.Client
}

func newKitexPoolClient(cfg ClientConfig) (Client, error) {
	n := max(cfg.Concurrency, 10)
	return newKitexClient(cfg, client.WithLongConnection(connpool.IdleConfig{
		MaxIdlePerAddress: n,
		MaxIdleGlobal:     n * len(cfg.Addrs),
		MaxIdleTimeout:    time.Minute,
	}))
}

func newKitexMuxClient(cfg ClientConfig) (Client, error) {
	return newKitexClient(cfg, client.WithMuxConnection(max(cfg.Conns, 1)))
}

func newKitexClient(cfg ClientConfig, opts ...client.Option) (Client, error) {
	klog.SetLevel(klog.LevelError)
	// Kitex's default connect timeout, 50 ms, fails the pool's burst of dials at c = 4096 on
	// two cores; the other clients wait 1.5 s (tarscomm) to 20 s (gRPC). Give it the call's.
	opts = append(opts, client.WithHostPorts(cfg.Addrs...), client.WithRPCTimeout(cfg.Timeout),
		client.WithConnectTimeout(cfg.Timeout))
	cli, err := echo.NewClient("bench", opts...)
	if err != nil {
		return nil, err
	}
	return &kitexClient{cli: cli}, nil
}

func (c *kitexClient) Close() error { return nil } // generated Kitex clients have no Close

func (c *kitexClient) NewCaller(_ int, payload []byte) Caller {
	return &kitexCaller{cli: c.cli, payload: payload}
}

type kitexCaller struct {
	cli     echo.Client
	payload []byte
	req     kbench.EchoReq
}

func (c *kitexCaller) Call(seq uint64) error {
	c.req.Data, c.req.Seq = c.payload, seq
	rsp, err := c.cli.Echo(context.Background(), &c.req)
	if err != nil {
		return err
	}
	return check(seq, c.payload, rsp.GetSeq(), rsp.GetData())
}
