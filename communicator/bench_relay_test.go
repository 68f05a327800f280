package communicator_test

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
	"github.com/tarscomm/tarscomm/server"
)

// BenchmarkRelay measures a call through a relay: the client calls a relay server whose handler
// (on a worker) calls the echo server and answers with its reply, all in one process over
// loopback. ctx=handler passes the handler's ctx to the downstream call (its deadline carried
// down, server: "The handler's ctx"); ctx=handler+value a ctx made from it by adding a value (a
// request id, a span), which the call does not watch either; ctx=detached passes
// context.WithoutCancel(ctx), without a deadline: the difference is what carrying the deadline
// costs a relayed request.
func BenchmarkRelay(b *testing.B) {
	type requestID struct{}
	for _, mode := range []string{"handler", "handler+value", "detached"} {
		b.Run("ctx="+mode, func(b *testing.B) {
			down := benchSetup(b)
			comm, err := communicator.New(conf.Default(), communicator.WithLogger(zap.NewNop()))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = comm.Close() })
			up := startRelayServer(b, comm, 64, func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
				switch mode {
				case "handler+value":
					ctx = context.WithValue(ctx, requestID{}, req.Name)
				case "detached":
					ctx = context.WithoutCancel(ctx)
				}
				rsp := new(hellopb.HelloReply)
				return rsp, down.Invoke(ctx, "SayHello", req, rsp)
			})
			ctx := context.Background()
			req := &hellopb.HelloRequest{Name: "relay"}
			b.ReportAllocs()
			b.SetParallelism(16)
			cpu0 := benchcpu.Used(b)
			b.RunParallel(func(pb *testing.PB) {
				rsp := new(hellopb.HelloReply)
				for pb.Next() {
					if err := up.Invoke(ctx, "SayHello", req, rsp); err != nil {
						b.Error(err)
						return
					}
				}
			})
			benchcpu.Report(b, cpu0)
		})
	}
}
