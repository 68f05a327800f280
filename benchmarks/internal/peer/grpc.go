package peer

import (
	"context"
	"errors"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
)

// grpcMethod is the full method name of Echo, as protoc-gen-go-grpc would write it.
const grpcMethod = "/bench.Echo/Echo"

// grpcEchoServer is the service interface protoc-gen-go-grpc would generate for echo.proto.
type grpcEchoServer interface {
	Echo(context.Context, *echopb.EchoReq) (*echopb.EchoRsp, error)
}

// grpcServiceDesc is the descriptor protoc-gen-go-grpc would generate, written out here so
// that the benchmarks need one generator less.
var grpcServiceDesc = grpc.ServiceDesc{
	ServiceName: "bench.Echo",
	HandlerType: (*grpcEchoServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: Method,
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(echopb.EchoReq)
			if err := dec(in); err != nil {
				return nil, err
			}
			return srv.(grpcEchoServer).Echo(ctx, in)
		},
	}},
	Metadata: "echo.proto",
}

type grpcEcho struct{}

func (grpcEcho) Echo(_ context.Context, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
	return &echopb.EchoRsp{Data: req.Data, Seq: req.Seq}, nil
}

type grpcServer struct {
	s    *grpc.Server
	addr string
}

func startGRPCServer(addr string, _ ServerConfig) (Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer(grpc.MaxRecvMsgSize(MaxFrame), grpc.MaxSendMsgSize(MaxFrame))
	s.RegisterService(&grpcServiceDesc, grpcEcho{})
	go func() { _ = s.Serve(ln) }()
	return &grpcServer{s: s, addr: ln.Addr().String()}, nil
}

func (g *grpcServer) Addr() string { return g.addr }

func (g *grpcServer) Stop() {
	done := make(chan struct{})
	go func() { g.s.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		g.s.Stop()
	}
}

// grpcClient has one ClientConn (one HTTP/2 connection) per address; callers take them in
// turn. Each call carries its deadline in a context, gRPC's only way to time a call out.
// Message limits are raised to MaxFrame on both sides (gRPC-go receives 4 MiB by default);
// flow control keeps gRPC-go's defaults (dynamic windows from its BDP estimate).
type grpcClient struct {
	conns   []*grpc.ClientConn
	timeout time.Duration
}

func newGRPCClient(cfg ClientConfig) (Client, error) {
	c := &grpcClient{timeout: cfg.Timeout}
	for _, a := range cfg.Addrs {
		cc, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxFrame), grpc.MaxCallSendMsgSize(MaxFrame)))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.conns = append(c.conns, cc)
	}
	return c, nil
}

func (c *grpcClient) Close() error {
	var errs []error
	for _, cc := range c.conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}

func (c *grpcClient) NewCaller(worker int, payload []byte) Caller {
	return &grpcCaller{cc: c.conns[worker%len(c.conns)], timeout: c.timeout, payload: payload}
}

type grpcCaller struct {
	cc      *grpc.ClientConn
	timeout time.Duration
	payload []byte
	req     echopb.EchoReq
	rsp     echopb.EchoRsp
}

func (c *grpcCaller) Call(seq uint64) error {
	c.req.Data, c.req.Seq = c.payload, seq
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	err := c.cc.Invoke(ctx, grpcMethod, &c.req, &c.rsp)
	cancel()
	if err != nil {
		return err
	}
	return checkReply(seq, c.payload, &c.rsp)
}
