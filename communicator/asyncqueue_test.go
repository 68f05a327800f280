package communicator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// startSleeper starts a project server whose SayHello waits until gate is closed, or for at most
// d, on one of many workers, so that calls pile up in flight, not in its queue; t.Cleanup stops
// it.
func startSleeper(t *testing.T, d time.Duration, workers int, gate <-chan struct{}) *greeter {
	t.Helper()
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("sleeper")), server.WithNumEventLoop(1),
		server.WithWorkers(workers), server.WithQueueCap(1<<16))
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if req.GetName() != "warm" {
			stop, release := stopped(ctx, false)
			defer release()
			select {
			case <-gate:
			case <-time.After(d):
			case <-stop:
				return nil, ctx.Err()
			}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@sleeper", Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &greeter{id: "sleeper", srv: s, addr: a.String(), release: make(chan struct{})}
	t.Cleanup(func() { g.stop(t) })
	return g
}

// TestAsyncQueueCapDoesNotBoundCallsInFlight makes more async calls to a slow server than the
// old default asyncqueuecap (10000), with the default config, while the callbacks themselves are
// quick: the callback queue stays short, so none may be refused, and every one must succeed.
func TestAsyncQueueCapDoesNotBoundCallsInFlight(t *testing.T) {
	const n = 12000
	gate := make(chan struct{})
	g := startSleeper(t, 10*time.Second, 4096, gate)
	comm := newComm(t, nil)
	if got := comm.Config().AsyncQueueCap; got != 100000 {
		t.Fatalf("default asyncqueuecap = %d, want 100000", got)
	}
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	var inFlight, peak atomic.Int64
	for i := range n {
		rsp := new(hellopb.HelloReply)
		wg.Add(1)
		if cur := inFlight.Add(1); cur > peak.Load() {
			peak.Store(cur)
		}
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "q", Seq: uint64(i)}, rsp, func(err error) {
			defer wg.Done()
			inFlight.Add(-1)
			if err == nil {
				_, err = checkReply(rsp, "q", uint64(i))
			}
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		}, servantproxy.WithTimeout(20*time.Second))
		if err != nil {
			t.Fatalf("AsyncInvoke %d of %d with %d in flight: %v", i+1, n, inFlight.Load()-1, err)
		}
	}
	p := peak.Load()
	close(gate) // every call was accepted: let the server answer them
	if p <= 10000 {
		t.Fatalf("at most %d calls were in flight: the test did not exceed the old bound", p)
	}
	wg.Wait()
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d async calls failed, first: %v", f, n, firstErr.Load())
	}
}

// TestAsyncQueueCapRefusesWhenCallbacksPileUp blocks the only async worker in a callback, so
// the replies of the next calls wait for it: once asyncqueuecap of them wait, AsyncInvoke fails
// at once with ErrQueueFull. Releasing the worker runs every accepted callback once, and calls
// are accepted again.
func TestAsyncQueueCapRefusesWhenCallbacksPileUp(t *testing.T) {
	const capacity = 8
	g := startGreeter(t, "fast", serverOpt{})
	comm := newComm(t, func(c *conf.Config) { c.AsyncThread = 1; c.AsyncQueueCap = capacity })
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	release := make(chan struct{})
	blocked := make(chan struct{})
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "b"}, new(hellopb.HelloReply), func(error) {
		close(blocked)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	<-blocked

	var wg sync.WaitGroup
	var ran atomic.Int64
	var runErr atomic.Value
	accepted := 0
	var refusal error
	for i := 0; refusal == nil && i < 1000; i++ {
		rsp := new(hellopb.HelloReply)
		wg.Add(1)
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "p", Seq: uint64(i)}, rsp, func(err error) {
			defer wg.Done()
			if ran.Add(1) > int64(accepted) {
				runErr.CompareAndSwap(nil, errors.New("more callbacks ran than calls were accepted"))
			}
			if err == nil {
				_, err = checkReply(rsp, "p", uint64(i))
			}
			if err != nil {
				runErr.CompareAndSwap(nil, err)
			}
		})
		if err != nil {
			wg.Done()
			refusal = err
			break
		}
		accepted++
		time.Sleep(2 * time.Millisecond) // let the reply arrive and queue up behind the blocked worker
	}
	if !errors.Is(refusal, communicator.ErrQueueFull) {
		t.Fatalf("after %d accepted calls the refusal is %v, want ErrQueueFull", accepted, refusal)
	}
	if accepted < capacity {
		t.Fatalf("refused after %d accepted calls, want at least asyncqueuecap = %d", accepted, capacity)
	}
	close(release)
	wg.Wait()
	if got := ran.Load(); got != int64(accepted) {
		t.Fatalf("%d callbacks ran, want %d", got, accepted)
	}
	if err, _ := runErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	if err := callOnce(t, ctx, asyncCall, sp, 1, 5*time.Second); err != nil {
		t.Fatalf("async call once the queue drained: %v", err)
	}
}

// TestAsyncInFlightLimit bounds the async calls in flight with async-inflight-limit: beyond it
// AsyncInvoke fails at once with ErrQueueFull, and every accepted callback still runs.
func TestAsyncInFlightLimit(t *testing.T) {
	const limit = 4
	g := startGreeter(t, "slow", serverOpt{block: true})
	comm := newComm(t, func(c *conf.Config) { c.AsyncInFlightLimit = limit })
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	accepted := 0
	var full error
	for range 10 {
		wg.Add(1)
		start := time.Now()
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(error) { wg.Done() })
		if err != nil {
			wg.Done()
			full = err
			within(t, "the refusal", time.Since(start), time.Second)
			continue
		}
		accepted++
	}
	if accepted != limit || !errors.Is(full, communicator.ErrQueueFull) {
		t.Fatalf("accepted %d async calls (want %d), refusal: %v (want ErrQueueFull)", accepted, limit, full)
	}
	close(g.release)
	wg.Wait()
}
