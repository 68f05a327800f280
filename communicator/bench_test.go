package communicator_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// benchSetup starts an inline echo server and a Communicator with one net thread on loopback.
func benchSetup(b *testing.B) *servantproxy.ServantProxy { return benchSetupOn(b, "tcp", true) }

// benchSetupOn is benchSetup over network, "tcp" or "udp"; stats false turns the
// Communicator's call counting off (communicator.WithoutStats).
func benchSetupOn(b testing.TB, network string, stats bool) *servantproxy.ServantProxy {
	b.Helper()
	s := server.New(server.WithNumEventLoop(1))
	err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName(), Seq: req.GetSeq()}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	addr, err := s.Start(network + "://127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop(context.Background()) })
	opts := []communicator.Option{communicator.WithLogger(zap.NewNop())}
	if !stats {
		opts = append(opts, communicator.WithoutStats())
	}
	comm, err := communicator.New(conf.Default(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = comm.Close() })
	g := &greeter{addr: addr.String()}
	ep := g.endpoint()
	if network == "udp" {
		ep = "udp" + strings.TrimPrefix(ep, "tcp")
	}
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+ep, &sp); err != nil {
		b.Fatal(err)
	}
	return &sp
}

// withStats runs bench twice, as sub-benchmarks stats=on and stats=off, the Communicator
// counting calls or not (communicator.WithoutStats), so that one run shows what counting costs.
// On a busy machine compare them over runs of one each in its own process, alternating which
// runs first (the first of a process pays for its warm-up), e.g. ten rounds of
// go test -bench 'SyncCall/stats=on$' -count 1 and the same with off, into one file for
// benchstat -col /stats; cpu-ns/op is steadier there than ns/op.
func withStats(b *testing.B, bench func(b *testing.B, sp *servantproxy.ServantProxy)) {
	for _, on := range []bool{true, false} {
		name := "stats=on"
		if !on {
			name = "stats=off"
		}
		b.Run(name, func(b *testing.B) {
			sp := benchSetupOn(b, "tcp", on)
			cpu0 := benchcpu.Used(b)
			bench(b, sp)
			// The process's CPU time (callers, net thread, server) per call.
			benchcpu.Report(b, cpu0)
		})
	}
}

// BenchmarkSyncCall measures one sync call end to end over loopback from many goroutines
// (b.RunParallel, GOMAXPROCS×16 callers), including the protobuf marshal and unmarshal, with
// call counting on and off (see withStats).
func BenchmarkSyncCall(b *testing.B) { withStats(b, benchSyncCall) }

// BenchmarkSyncCallUDP is BenchmarkSyncCall (counting calls) to a udp endpoint: one datagram
// per request and per reply.
func BenchmarkSyncCallUDP(b *testing.B) { benchSyncCall(b, benchSetupOn(b, "udp", true)) }

func benchSyncCall(b *testing.B, sp *servantproxy.ServantProxy) {
	ctx := context.Background()
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := &hellopb.HelloRequest{Name: "bench"}
		rsp := new(hellopb.HelloReply)
		for pb.Next() {
			if err := sp.Invoke(ctx, "SayHello", req, rsp); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkFutureCall measures future calls waited for by their callers, 16 callers per core:
// each op is one FutureInvoke and its Get (a Get that waits while callbacks run pays a timer:
// asyncproc.Pool.Wait).
func BenchmarkFutureCall(b *testing.B) {
	sp := benchSetup(b)
	ctx := context.Background()
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := &hellopb.HelloRequest{Name: "bench"}
		rsp := new(hellopb.HelloReply)
		for pb.Next() {
			if _, err := sp.FutureInvoke(ctx, "SayHello", req, rsp).Get(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSyncCallSerial measures the latency of one sync call with a single caller.
func BenchmarkSyncCallSerial(b *testing.B) { benchSyncCallSerial(b, benchSetup(b)) }

// BenchmarkSyncCallSerialUDP is BenchmarkSyncCallSerial to a udp endpoint.
func BenchmarkSyncCallSerialUDP(b *testing.B) {
	benchSyncCallSerial(b, benchSetupOn(b, "udp", true))
}

func benchSyncCallSerial(b *testing.B, sp *servantproxy.ServantProxy) {
	ctx := context.Background()
	req := &hellopb.HelloRequest{Name: "bench"}
	rsp := new(hellopb.HelloReply)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := sp.Invoke(ctx, "SayHello", req, rsp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAsyncCall measures async calls end to end: each op is one AsyncInvoke whose callback
// has run, with up to 1024 calls in flight, with call counting on and off (see withStats).
func BenchmarkAsyncCall(b *testing.B) { withStats(b, benchAsyncCall) }

func benchAsyncCall(b *testing.B, sp *servantproxy.ServantProxy) {
	ctx := context.Background()
	req := &hellopb.HelloRequest{Name: "bench"}
	var wg sync.WaitGroup
	window := make(chan struct{}, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		window <- struct{}{}
		wg.Add(1)
		rsp := new(hellopb.HelloReply)
		err := sp.AsyncInvoke(ctx, "SayHello", req, rsp, func(err error) {
			if err != nil {
				b.Error(err)
			}
			<-window
			wg.Done()
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
}
