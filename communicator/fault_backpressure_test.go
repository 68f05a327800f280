package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestBackpressureAsyncQueueFull fills async-inflight-limit with async calls to a black-holed server:
// the calls beyond it are refused at once with ErrQueueFull; the accepted ones time out, each
// callback once; then the slots are free again and a call succeeds once the server is back.
func TestBackpressureAsyncQueueFull(t *testing.T) {
	const capacity = 4
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) { c.AsyncInFlightLimit = capacity }))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	ep.p.BlackHole(faultproxy.Both)

	var accepted []<-chan error
	for i := range 10 {
		start := time.Now()
		done, err := asyncHello(t, ctx, sp, "x", uint64(i), servantproxy.WithTimeout(200*time.Millisecond))
		took := time.Since(start)
		switch {
		case err == nil:
			accepted = append(accepted, done)
		case errors.Is(err, communicator.ErrQueueFull):
			within(t, fmt.Sprintf("refusal %d", i), took, 20*time.Millisecond)
		default:
			t.Fatalf("call %d: err = %v, want nil or ErrQueueFull", i, err)
		}
	}
	if len(accepted) != capacity {
		t.Fatalf("%d async calls accepted, want %d (async-inflight-limit)", len(accepted), capacity)
	}
	for i, done := range accepted {
		if err := waitErr(done, time.Second, "callback"); !errors.Is(err, communicator.ErrTimeout) {
			t.Errorf("accepted call %d: err = %v, want ErrTimeout", i, err)
		}
	}
	if err := ep.p.Pass(); err != nil {
		t.Fatal(err)
	}
	if err := callOnce(t, ctx, asyncCall, sp, 99, 2*time.Second); err != nil {
		t.Fatalf("async call after the queue drained: %v", err)
	}
}

// TestBackpressureQueueCap sets queue-cap (calls waiting for their net thread) to 1 and submits
// bursts from many goroutines: calls that find the queue full fail at once with ErrQueueFull, the
// others succeed.
func TestBackpressureQueueCap(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) { c.QueueCap = 1 }))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	var full, ok, slowestFull atomic.Int64
	for round := range 20 {
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range 64 {
			wg.Go(func() {
				<-gate
				start := time.Now()
				_, err := sayHello(ctx, sp, "x", uint64(round*64+i))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, communicator.ErrQueueFull):
					full.Add(1)
					// ErrQueueFull itself says it was refused, not queued (a queued call
					// succeeds or times out); how soon is a figure.
					took := int64(time.Since(start))
					for s := slowestFull.Load(); took > s && !slowestFull.CompareAndSwap(s, took); s = slowestFull.Load() {
					}
				default:
					t.Errorf("err = %v, want nil or ErrQueueFull", err)
				}
			})
		}
		close(gate)
		wg.Wait()
		if full.Load() > 0 && round >= 2 {
			break
		}
	}
	t.Logf("queue-cap 1: %d calls refused with ErrQueueFull, %d succeeded", full.Load(), ok.Load())
	slowest := time.Duration(slowestFull.Load())
	timingFigure(t, slowest <= 20*time.Millisecond, slowest > 500*time.Millisecond, "the slowest ErrQueueFull came after %v (target at once: within 20ms)", slowest)
	if full.Load() == 0 {
		t.Fatal("no call was refused with queue-cap 1 under bursts of 64 callers")
	}
	if ok.Load() == 0 {
		t.Fatal("no call succeeded")
	}
}

// TestBackpressureStalledPeerQueueFull stops reading the client's requests at the proxy (the
// server is not reading): once the connection's unsent bytes pass the send-buffer limit, new
// calls fail at once with ErrQueueFull instead of buffering without bound. The async calls have
// a liveness timeout and end when the Communicator closes: with a second's timeout, on a loaded
// machine under -race, the first calls expired before 32 MiB were offered (a megabyte's encoding
// and page faults take milliseconds), so the unsent bytes never passed the limit (one make test
// beside two CPU hogs and a CI run failed so, after 14.5 s).
func TestBackpressureStalledPeerQueueFull(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) { c.AsyncQueueCap = 1000 }))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.Stall(faultproxy.Up)
	name := strings.Repeat("x", 1<<20) // 1 MiB per request
	var wg sync.WaitGroup
	var queueFull, other atomic.Int64
	for i := range 100 {
		wg.Add(1)
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			defer wg.Done()
			switch {
			case errors.Is(err, communicator.ErrQueueFull):
				queueFull.Add(1)
			case errors.Is(err, communicator.ErrTimeout), errors.Is(err, communicator.ErrClosed):
			default:
				other.Add(1)
				t.Errorf("async call into a stalled peer: err = %v, want ErrQueueFull, ErrTimeout or ErrClosed", err)
			}
		}, servantproxy.WithTimeout(3*live))
		if err != nil {
			wg.Done()
			t.Fatalf("AsyncInvoke %d: %v", i, err)
		}
	}
	// Once 100 MiB have been offered, the send buffer is over its limit: a sync call is refused
	// at once.
	waitFor(t, "an async call is refused with ErrQueueFull", func() bool { return queueFull.Load() > 0 })
	start := time.Now()
	_, err := sayHello(ctx, sp, "more", 1, servantproxy.WithTimeout(live))
	// ErrQueueFull (not ErrTimeout) says it was refused instead of buffered; how soon is a figure.
	if !errors.Is(err, communicator.ErrQueueFull) {
		t.Fatalf("call into a full send buffer: err = %v, want ErrQueueFull", err)
	}
	took := time.Since(start)
	timingFigure(t, took <= slack, took > 2*time.Second, "a call into a full send buffer was refused after %v (target at once: within %v)", took, slack)
	// The calls still queued end with ErrClosed, each callback once.
	_ = closeComm(t, comm)
	waitDone(t, &wg, "the async calls' callbacks")
	t.Logf("%d of 100 async 1 MiB calls refused with ErrQueueFull", queueFull.Load())
}

// sustainedAsyncLoad keeps window async calls with bodies of size bytes in flight for d, calls
// atEnd while the last window is still in flight, and returns the callbacks' errors by class.
// Every callback has run when it returns.
func sustainedAsyncLoad(t *testing.T, sp *servantproxy.ServantProxy, window, size int, timeout, d time.Duration, atEnd func()) map[string]int {
	t.Helper()
	ctx := context.Background() // no cancel watcher: the load measures the engine, not contexts
	sem := make(chan struct{}, window)
	var (
		mu      sync.Mutex
		classes = map[string]int{}
		wg      sync.WaitGroup
	)
	name := strings.Repeat("m", size)
	count := func(err error) {
		c := classify(err)
		if c == "" {
			c = err.Error()
		}
		mu.Lock()
		classes[c]++
		mu.Unlock()
	}
	deadline := time.Now().Add(d)
	for i := 0; time.Now().Before(deadline); i++ {
		sem <- struct{}{}
		wg.Add(1)
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			defer wg.Done()
			<-sem
			count(err)
		}, servantproxy.WithTimeout(timeout))
		if err != nil {
			wg.Done()
			<-sem
			count(err)
		}
	}
	atEnd()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout + 5*time.Second):
		t.Fatalf("async calls still running %v after the load stopped", timeout+5*time.Second)
	}
	return classes
}

// TestBackpressureMemoryBounded keeps a window of 1000 async calls of 4 KiB in flight for 3s to
// a server that stalls, and checks that the heap grows by less than 64 MiB and that every call
// ends with ErrTimeout or ErrQueueFull. "black hole" reads and drops the requests; "stalled" does
// not read them at all, so they pile up in the client's send buffer.
func TestBackpressureMemoryBounded(t *testing.T) {
	const (
		window  = 1000
		size    = 4 << 10
		timeout = 100 * time.Millisecond
		runFor  = 3 * time.Second
		maxGrow = 64 << 20
	)
	for _, tt := range []struct {
		name  string
		fault func(p *faultproxy.Proxy)
	}{
		{name: "black hole", fault: func(p *faultproxy.Proxy) { p.BlackHole(faultproxy.Both) }},
		{name: "stalled", fault: func(p *faultproxy.Proxy) { p.Stall(faultproxy.Up) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ep := startFaultEP(t, "a")
			comm := newComm(t, faultConf(func(c *conf.Config) { c.AsyncQueueCap = 2 * window }))
			sp := proxyToEPs(t, comm, ep)
			if _, err := sayHello(testCtx(t), sp, "warm", 0); err != nil {
				t.Fatal(err)
			}
			tt.fault(ep.p)
			before := heapInuse()
			var loaded uint64
			classes := sustainedAsyncLoad(t, sp, window, size, timeout, runFor, func() { loaded = heapInuse() })
			after := heapInuse()
			grew := int64(max(loaded, after)) - int64(before)
			t.Logf("heap in use %d MiB before, %d MiB at the end of the load, %d MiB after; outcomes %v", before>>20, loaded>>20, after>>20, classes)
			if grew > maxGrow {
				t.Errorf("heap grew by %d MiB under a stalled server, want less than %d MiB", grew>>20, maxGrow>>20)
			}
			total := 0
			for c, n := range classes {
				total += n
				if c != "timeout" && c != "queue-full" {
					t.Errorf("%d calls ended with %q, want only timeouts and queue-full", n, c)
				}
			}
			if total < window {
				t.Errorf("only %d calls made in %v", total, runFor)
			}
		})
	}
}
