package communicator_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
)

// TestGoexitInEndKeepsResolution: "an async or future call that returns nil gets
// exactly one callback (or one resolution)" (README), and finishAsync runs the callback "even if
// the interceptors' End panics ... a call that was accepted is called back". An interceptor's
// OnEnd that ends its goroutine with runtime.Goexit (a test's tracing interceptor calling
// t.FailNow / require.NoError on info.Err: the case asyncproc replaces its worker for, and
// viaHooks ends the call for when an interceptor does it before next) is not stopped by ended's
// recover: before, finishAsync never got past it, so the user's callback, here the future's
// completion, never ran. The call was answered (the server answers at once), yet the future
// stayed pending and its Get waited until its own ctx ended. Now the callback runs from a
// deferred call of finishAsync.
func TestGoexitInEndKeepsResolution(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		if info.Async {
			info.OnEnd(func(*interceptor.CallInfo) { runtime.Goexit() }) // what t.FailNow does
		}
		return next(ctx, info)
	}
	comm := newCommWith(t, func(c *conf.Config) { c.AsyncThread = 2 }, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "f", Seq: 1}, new(hellopb.HelloReply))
	getCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := f.Get(getCtx)
	if !f.Done() {
		t.Fatalf("the future of an answered call is still pending after 5s (Get: %v): the interceptor's OnEnd "+
			"called runtime.Goexit and the call's callback, which completes the future, never ran", err)
	}
	if err == nil {
		if _, err := checkReply(r.(*hellopb.HelloReply), "f", 1); err != nil {
			t.Fatal(err)
		}
	}
}
