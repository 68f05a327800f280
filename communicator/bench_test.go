package communicator_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// benchSetup starts an inline echo server and a Communicator with one net thread on loopback.
// TARSCOMM_BENCH_NOSTATS=1 turns the Communicator's call counting off, to measure its cost.
func benchSetup(b *testing.B) *servantproxy.ServantProxy { return benchSetupOn(b, "tcp") }

// benchSetupOn is benchSetup over network, "tcp" or "udp".
func benchSetupOn(b *testing.B, network string) *servantproxy.ServantProxy {
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
	if os.Getenv("TARSCOMM_BENCH_NOSTATS") == "1" {
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

// BenchmarkSyncCall measures one sync call end to end over loopback from many goroutines
// (b.RunParallel, GOMAXPROCS×16 callers), including the protobuf marshal and unmarshal.
func BenchmarkSyncCall(b *testing.B) { benchSyncCall(b, benchSetup(b)) }

// BenchmarkSyncCallUDP is BenchmarkSyncCall to a udp endpoint: one datagram per request and
// per reply.
func BenchmarkSyncCallUDP(b *testing.B) { benchSyncCall(b, benchSetupOn(b, "udp")) }

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

// BenchmarkSyncCallSerial measures the latency of one sync call with a single caller.
func BenchmarkSyncCallSerial(b *testing.B) { benchSyncCallSerial(b, benchSetup(b)) }

// BenchmarkSyncCallSerialUDP is BenchmarkSyncCallSerial to a udp endpoint.
func BenchmarkSyncCallSerialUDP(b *testing.B) { benchSyncCallSerial(b, benchSetupOn(b, "udp")) }

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
// has run, with up to 1024 calls in flight.
func BenchmarkAsyncCall(b *testing.B) {
	sp := benchSetup(b)
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
