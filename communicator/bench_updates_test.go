package communicator_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/server"
)

// listSource is a naming.Source the benchmark drives: Set pushes a list to the watch.
type listSource struct {
	mu   sync.Mutex
	push func(naming.List)
	last naming.List
}

func (s *listSource) Watch(_ naming.Query, push func(naming.List)) func() {
	s.mu.Lock()
	s.push = push
	l := s.last
	s.mu.Unlock()
	push(l)
	return func() {
		s.mu.Lock()
		s.push = nil
		s.mu.Unlock()
	}
}

func (s *listSource) Set(l naming.List) {
	s.mu.Lock()
	s.last = l
	push := s.push
	s.mu.Unlock()
	if push != nil {
		push(l)
	}
}

// BenchmarkCallsDuringUpdates: 64 callers call a servant listed with 10,000 endpoints (4 real
// active servers, 9,996 registered but inactive, as a registry lists them, kept for hash
// stability) on 8 net threads, first with no update, then while an update replacing 1,000 of the
// inactive endpoints is pushed every 50 ms. It reports each phase's p99 and the updates made; no
// call may fail. (Issue 8's target is the updating p99 within 2x the quiet one.)
func BenchmarkCallsDuringUpdates(b *testing.B) {
	const (
		callers  = 64
		inactive = 9996
		threads  = 8
		phase    = time.Second
	)
	var active []endpoint.Endpoint
	for range 4 {
		s := server.New(server.WithNumEventLoop(1))
		if err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			return &hellopb.HelloReply{Message: req.GetName(), Seq: req.GetSeq()}, nil
		}); err != nil {
			b.Fatal(err)
		}
		addr, err := s.Start("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Stop(context.Background()) })
		ep, err := endpoint.ParseEndpoint(tcpEndpoint(addr.String()))
		if err != nil {
			b.Fatal(err)
		}
		active = append(active, ep)
	}
	fake := func(base, n int) []endpoint.Endpoint {
		eps := make([]endpoint.Endpoint, n)
		for i := range eps {
			k := base + i
			eps[i] = endpoint.Endpoint{Proto: endpoint.TCP, Host: fmt.Sprintf("10.%d.%d.%d", k>>16&255, k>>8&255, k&255), Port: 10000 + k%50000, Weight: -1}
		}
		return eps
	}
	lists := [2][]endpoint.Endpoint{fake(0, inactive), append(fake(inactive, 1000), fake(0, inactive)[1000:]...)}
	src := &listSource{last: naming.List{Active: active, Inactive: lists[0]}}
	cfg := conf.Default()
	cfg.NetThread = threads
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.NewNop()), communicator.WithNaming(src))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = comm.Close() })
	sp, err := comm.Proxy(servant)
	if err != nil {
		b.Fatal(err)
	}

	run := func(update bool) (p99 time.Duration, calls, updates int) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		lat := make([][]time.Duration, callers)
		for i := range callers {
			wg.Go(func() {
				req, rsp := &hellopb.HelloRequest{Name: "u"}, new(hellopb.HelloReply)
				for {
					select {
					case <-stop:
						return
					default:
					}
					t0 := time.Now()
					if err := sp.Invoke(context.Background(), "SayHello", req, rsp); err != nil {
						b.Error(err)
						return
					}
					lat[i] = append(lat[i], time.Since(t0))
				}
			})
		}
		deadline := time.Now().Add(phase)
		for time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			if update {
				updates++
				src.Set(naming.List{Active: active, Inactive: lists[updates%2]})
			}
		}
		close(stop)
		wg.Wait()
		var all []time.Duration
		for _, l := range lat {
			all = append(all, l...)
		}
		slices.Sort(all)
		if len(all) == 0 {
			b.Fatal("no call completed")
		}
		return all[len(all)*99/100], len(all), updates
	}
	b.ResetTimer()
	// Each round takes two phases of a second: the metrics are per round, so a long -benchtime
	// (make bench-smoke's 100x) runs at most three rounds.
	for range min(b.N, 3) {
		quiet, n0, _ := run(false)
		busy, n1, u := run(true)
		b.ReportMetric(float64(quiet.Microseconds()), "p99-µs-quiet")
		b.ReportMetric(float64(busy.Microseconds()), "p99-µs-updating")
		b.ReportMetric(float64(u), "updates")
		b.ReportMetric(float64(n0+n1), "calls")
	}
}
