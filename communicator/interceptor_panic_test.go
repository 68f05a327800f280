package communicator_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
)

// TestInterceptorPanicEndsCallForOuterOnes: a chain of two client interceptors, the outer one a tracer
// or an in-flight gauge (it registers OnEnd to end its span / decrement its gauge), the inner one
// buggy: it panics before calling next. The caller recovers the panic (net/http recovers a
// handler's panic and keeps serving, so does any worker pool). CallInfo.End promises "The
// communicator calls it exactly once per call that went through a Client", and interceptor's doc
// "The call ends once, whatever its kind": the outer OnEnd must run once, with an error. It never
// runs: viaHooks (servantproxy/hooks.go) calls End only when the interceptors return, and a panic
// skips it, so every such call leaks a span / leaves the gauge up for good. Sync and async alike.
//
// viaHooks now ends such a call (the panic goes on); before, the outer OnEnd ran 0 times.
func TestInterceptorPanicEndsCallForOuterOnes(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	var ends atomic.Int32
	var endErr atomic.Value
	outer := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.OnEnd(func(i *interceptor.CallInfo) {
			ends.Add(1)
			if i.Err != nil {
				endErr.Store(i.Err)
			}
		})
		return next(ctx, info)
	}
	inner := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		if info.Function == "SayHello" {
			panic("a bug in an inner interceptor")
		}
		return next(ctx, info)
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(outer, inner))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	for _, kind := range []string{"sync", "async"} {
		ends.Store(0)
		cbRan := make(chan error, 1)
		p := recovered(func() {
			if kind == "sync" {
				_, _ = sayHello(ctx, sp, "p", 1)
				return
			}
			_ = sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "p"}, new(hellopb.HelloReply), func(err error) { cbRan <- err })
		})
		if p == nil {
			t.Fatalf("%s: the inner interceptor's panic did not reach the caller (test set-up)", kind)
		}
		// End, if it ran, ran before the panic left the proxy; allow the async worker a moment.
		deadline := time.Now().Add(time.Second)
		for ends.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := ends.Load(); n != 1 {
			t.Errorf("%s call whose inner interceptor panicked: the outer interceptor's OnEnd ran %d times, want exactly once (CallInfo.End: \"exactly once per call that went through a Client\"); its span/gauge leaks", kind, n)
		}
	}
	// The Communicator still closes: nothing was reserved.
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
}
