package asyncproc

import (
	"runtime"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestCallbackGoexitLogLimited: the async callback that panics on every reply is
// logged once a second (docs/ARCHITECTURE.md: "Handler and async callback panics are limited
// the same way, per function and per pool"); its twin that calls runtime.Goexit on every reply
// (t.FailNow in a test's callback, a helper that ends its goroutine) wrote an Error line with
// a full stack per reply, unbounded, before; it is limited the same way now.
func TestCallbackGoexitLogLimited(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	p := newPool(t, Options{Workers: 2, QueueCap: 1024, Log: zap.New(core)})
	defer p.Close()
	const calls = 200
	start := time.Now()
	for range calls {
		if err := p.Reserve(); err != nil {
			t.Fatal(err)
		}
		p.Deliver(&call.Call{Finish: func(*call.Call) { runtime.Goexit() }})
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Goexits() < calls {
		if time.Now().After(deadline) {
			t.Fatalf("%d callbacks ended their goroutine in 10 s, want %d", p.Goexits(), calls)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	secs := int(time.Since(start)/time.Second) + 1
	if n := logs.Len(); n > 2*(secs+1) {
		e := logs.All()[0]
		t.Fatalf("%d callbacks calling runtime.Goexit in ~%ds wrote %d Error lines with a stack (want at most %d, as for panics); first: %q",
			calls, secs, n, 2*(secs+1), e.Message)
	}
}
