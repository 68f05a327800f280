package communicator_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
)

// TestNextTwiceAsync: a client interceptor that calls next twice on an async call (interceptor's
// doc: "It must call next at most once") gets an error from the second next, and nothing more is
// sent: the callback runs once. Before, the second next sent the call again, and the user's
// callback of that one AsyncInvoke ran twice, breaking the "an async call that returns nil gets
// exactly one callback" promise (README, Async calls).
//
// One async worker, so that the two callbacks (and the two info.End runs, which would race on
// the shared CallInfo with more workers) run one after the other.
func TestNextTwiceAsync(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	var secondNext atomic.Value // the error the second next returned
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		err := next(ctx, info)
		if info.Async {
			e2 := next(ctx, info) // the misuse: a mirror/hedge interceptor written without the rule in mind
			secondNext.Store(errBox{e2})
		}
		return err
	}
	comm := newCommWith(t, func(c *conf.Config) { c.AsyncThread = 1 }, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	var ran atomic.Int64
	first := make(chan error, 1)
	err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 1}, new(hellopb.HelloReply), func(err error) {
		if ran.Add(1) == 1 {
			first <- err
		}
	})
	if err != nil {
		t.Fatalf("AsyncInvoke: %v", err)
	}
	if err := waitErr(first, live, "first callback"); err != nil {
		t.Fatalf("first callback: %v", err)
	}
	// Close runs every callback still due (a second call in flight fails with ErrClosed and is
	// called back), so the count below is final.
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
	b, _ := secondNext.Load().(errBox)
	if n := ran.Load(); n != 1 {
		t.Fatalf("the callback of one AsyncInvoke ran %d times (the interceptor's second next returned %v); "+
			"want exactly once, the second next refused", n, b.err)
	}
	if b.err == nil {
		t.Fatalf("the interceptor's second next returned nil: the call was sent twice; want an error")
	}
}

type errBox struct{ err error }
