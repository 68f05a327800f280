package tarsotel_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/server"
)

// BenchmarkTracedRelay: a client calls a front server that relays each request to a back server
// with its handler's ctx, tracing on every hop (spans made and carried, not sampled), 16 callers
// per core. What the tracing costs a relay, and that the relayed call does not watch the
// handler's ctx (which would make its timer on every request).
func BenchmarkTracedRelay(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	o := tarsotel.Options{TracerProvider: tp}
	newComm := func() *communicator.Communicator {
		c, err := communicator.New(conf.Default(), communicator.WithLogger(zap.NewNop()),
			communicator.WithInterceptor(tarsotel.ClientInterceptor(o)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	start := func(reg func(*server.Server)) string {
		s := server.New(server.WithLogger(zap.NewNop()), server.WithWorkers(64), server.WithInterceptor(tarsotel.ServerInterceptor(o)))
		reg(s)
		a, err := s.Start("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Stop(context.Background()) })
		return a.String()
	}
	backAddr := start(func(s *server.Server) {
		if err := s.Handle(backObj, "Load", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		}); err != nil {
			b.Fatal(err)
		}
	})
	back := proxy(b, newComm(), backObj, backAddr)
	frontAddr := start(func(s *server.Server) {
		if err := s.Handle(frontObj, "Get", func(ctx context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			got, err := back.InvokeRaw(ctx, "Load", req)
			return append(rsp, got...), err
		}); err != nil {
			b.Fatal(err)
		}
	})
	front := proxy(b, newComm(), frontObj, frontAddr)
	req := []byte("relay")
	b.ReportAllocs()
	b.SetParallelism(16)
	cpu0 := benchcpu.Used(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := front.InvokeRaw(context.Background(), "Get", req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	benchcpu.Report(b, cpu0)
}
