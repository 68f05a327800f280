package tarsotel_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/interceptor"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// blockingServer starts a traced server whose "Block" waits until the test ends (t.Cleanup
// releases it before the server stops) and whose "Load" echoes; entered gets a value as each
// Block request reaches its handler.
func blockingServer(t *testing.T, o tarsotel.Options) (string, <-chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	entered := make(chan struct{}, 64)
	s := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1), server.WithWorkers(16),
		server.WithInterceptor(tarsotel.ServerInterceptor(o)))
	mustHandle(t, s, backObj, "Block", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return append(rsp, req...), nil
	})
	mustHandle(t, s, backObj, "Load", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	})
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := a.String()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	return addr, entered
}

// endCounter is a client interceptor, inside the tracing one, counting the calls that end.
type endCounter struct {
	mu   sync.Mutex
	ends map[string]int
	errs map[string]error
}

func (e *endCounter) icpt(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
	info.OnEnd(func(i *interceptor.CallInfo) {
		e.mu.Lock()
		e.ends[i.Function]++
		e.errs[i.Function] = i.Err
		e.mu.Unlock()
	})
	return next(ctx, info)
}

// TestSpansEndOnCloseAndTimeouts (a guard, passed when written): calls of every kind in flight to a handler that
// blocks end when their deadline passes, when their ctx is cancelled, or when the Communicator
// closes; each call's client span ends exactly once (one exported client span per call) with an
// Error status.
func TestSpansEndOnCloseAndTimeouts(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	addr, entered := blockingServer(t, o)
	ec := &endCounter{ends: map[string]int{}, errs: map[string]error{}}
	comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)),
		communicator.WithInterceptor(tarsotel.ClientInterceptor(o), ec.icpt))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = comm.Close()
		}
	})
	prx := proxy(t, comm, backObj, addr)

	long, cancelLong := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelLong()

	var wg sync.WaitGroup
	got := make(chan string, 16)
	// 1. sync, timeout.
	wg.Go(func() {
		_, err := prx.InvokeRaw(long, "Block", []byte("a"), timeoutOpt(200*time.Millisecond)...)
		got <- fmt.Sprintf("sync timeout: %v", err)
	})
	// 2. async, timeout.
	if err := prx.AsyncInvokeRaw(long, "Block", []byte("b"), func(_ []byte, err error) { got <- fmt.Sprintf("async timeout: %v", err) },
		timeoutOpt(200*time.Millisecond)...); err != nil {
		t.Fatal(err)
	}
	// 3. async, cancelled.
	cctx, ccancel := context.WithCancel(long)
	if err := prx.AsyncInvokeRaw(cctx, "Block", []byte("c"), func(_ []byte, err error) { got <- fmt.Sprintf("async cancel: %v", err) }); err != nil {
		t.Fatal(err)
	}
	// 4. future, cancelled.
	fctx, fcancel := context.WithCancel(long)
	f := prx.FutureInvokeRaw(fctx, "Block", []byte("d"))
	// 5. sync, cancelled.
	sctx, scancel := context.WithCancel(long)
	wg.Go(func() {
		_, err := prx.InvokeRaw(sctx, "Block", []byte("e"))
		got <- fmt.Sprintf("sync cancel: %v", err)
	})
	// 6, 7. sync and async left in flight until Close.
	wg.Go(func() {
		_, err := prx.InvokeRaw(long, "Block", []byte("f"))
		got <- fmt.Sprintf("sync close: %v", err)
	})
	if err := prx.AsyncInvokeRaw(long, "Block", []byte("g"), func(_ []byte, err error) { got <- fmt.Sprintf("async close: %v", err) }); err != nil {
		t.Fatal(err)
	}
	// 8. future left in flight until Close.
	f2 := prx.FutureInvokeRaw(long, "Block", []byte("h"))
	// 9. one-way (ends once written).
	if err := prx.InvokeOnewayRaw(long, "Block", []byte("i")); err != nil {
		t.Fatal(err)
	}
	const calls = 9
	for i := range calls {
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d requests reached the server", i, calls)
		}
	}
	ccancel()
	fcancel()
	scancel()
	time.Sleep(300 * time.Millisecond) // the timeouts pass
	if err := comm.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, ferr := f.Get(ctx)
	_, f2err := f2.Get(ctx)
	t.Logf("future cancel: %v; future close: %v", ferr, f2err)
	wg.Wait()
	for range 6 {
		select {
		case s := <-got:
			t.Log(s)
		case <-time.After(5 * time.Second):
			t.Fatal("a call did not end after Close")
		}
	}
	// After Close: refused at once, its span ended too.
	if _, err := prx.InvokeRaw(long, "Load", []byte("z")); err == nil {
		t.Error("a call after Close succeeded")
	}
	spans := kindOnly(spansWithin(exp, 100), trace.SpanKindClient)
	ec.mu.Lock()
	ends := ec.ends["Block"]
	ec.mu.Unlock()
	t.Logf("End ran %d times for %d Block calls", ends, calls)
	var block, load tracetest.SpanStubs
	for _, s := range spans {
		switch s.Name {
		case backObj + "/Block":
			block = append(block, s)
		case backObj + "/Load":
			load = append(load, s)
		}
	}
	if ends != calls {
		t.Errorf("the interceptors' End ran %d times for %d calls, want once each", ends, calls)
	}
	if len(block) != calls {
		t.Errorf("%d client spans of Block ended, want %d (one per call: a call without one leaked its span)", len(block), calls)
	}
	errored := 0
	for _, s := range block {
		if s.Status.Code == codes.Error {
			errored++
		}
	}
	if errored != calls-1 { // all but the one-way call, which ended when written
		t.Errorf("%d Block spans with status Error, want %d (timeouts, cancellations, Close)", errored, calls-1)
	}
	if len(load) != 1 || load[0].Status.Code != codes.Error {
		t.Errorf("the call after Close: %d spans %v, want 1 with status Error", len(load), load)
	}
}

func timeoutOpt(d time.Duration) []servantproxy.CallOption {
	return []servantproxy.CallOption{servantproxy.WithTimeout(d)}
}
