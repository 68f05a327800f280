package communicator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
)

// TestInterceptorDeferCancelAsync: the gRPC habit in a client interceptor,
//
//	ctx, cancel := context.WithTimeout(ctx, d); defer cancel(); return next(ctx, info)
//
// does not end an async call when the interceptor returns: the call gets its reply. Only the
// caller's ctx cancels an async call (servantproxy's callerCancel), which a second call checks.
// Before, the ctx handed to next was watched after AsyncInvoke returned, and the deferred cancel
// ended every async call at once with context.Canceled.
func TestInterceptorDeferCancelAsync(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{block: true})
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return next(ctx, info)
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	// The async call; the server holds its reply until released, so nothing but a cancellation
	// can end the call before that.
	done := make(chan error, 1)
	rsp := new(hellopb.HelloReply)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "async", Seq: 2}, rsp, func(err error) { done <- err }); err != nil {
		t.Fatalf("AsyncInvoke: %v", err)
	}
	var err error
	select {
	case err = <-done: // ended before the server answered: only a cancellation does that
	case <-time.After(2 * time.Second): // still waiting for its reply, as it should
		close(g.release)
		err = waitErr(done, live, "async callback")
	}
	if err != nil {
		t.Fatalf("async call through an interceptor that derives a ctx with WithTimeout and defers its cancel "+
			"ended with %v; want the server's reply (the caller's ctx was live, the server answers once released, "+
			"the interceptor's deadline was 5s away)", err)
	}
	if _, err := checkReply(rsp, "async", 2); err != nil {
		t.Fatal(err)
	}

	// The caller's own cancel still ends an async call through the same interceptor.
	g2 := startGreeter(t, "b", serverOpt{block: true})
	sp2 := proxyTo(t, comm, g2)
	cctx, ccancel := context.WithCancel(ctx)
	if err := sp2.AsyncInvoke(cctx, "SayHello", &hellopb.HelloRequest{Name: "cancelled", Seq: 3}, new(hellopb.HelloReply), func(err error) { done <- err }); err != nil {
		t.Fatalf("AsyncInvoke: %v", err)
	}
	ccancel()
	if err := waitErr(done, live, "cancelled async callback"); !errors.Is(err, context.Canceled) {
		t.Fatalf("async call whose caller cancelled its ctx ended with %v; want context.Canceled", err)
	}
	close(g2.release)
}
