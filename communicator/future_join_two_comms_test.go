package communicator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/future"
)

// TestFutureJoinTwoCommsInCallback: future's doc says a Get (or Join) of a call's future
// inside an async callback runs the waiting callbacks meanwhile and "never waits for itself, even
// with every worker waiting so": a Join of a future of Communicator A and one of Communicator B,
// called in a callback on B's (single) async worker, returns with both replies, whichever comes
// first. Before, WhenAll waited through its first input's pool (A's), whose Wait did not know
// B's worker and only blocked; B's future was completed by a callback queued behind the one
// waiting, and the Join ended only by its ctx. Now Wait starts a stand-in for the pool of the
// goroutine that waits, whatever the future's.
func TestFutureJoinTwoCommsInCallback(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	commA := newComm(t, func(c *conf.Config) { c.AsyncThread = 1 })
	commB := newComm(t, func(c *conf.Config) { c.AsyncThread = 1 })
	spA, spB := proxyTo(t, commA, g), proxyTo(t, commB, g)
	ctx := testCtx(t)

	result := make(chan error, 1)
	if err := spB.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "outer"}, new(hellopb.HelloReply), func(err error) {
		if err != nil {
			result <- fmt.Errorf("outer call: %w", err)
			return
		}
		fA := spA.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "a", Seq: 1}, new(hellopb.HelloReply))
		fB := spB.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "b", Seq: 2}, new(hellopb.HelloReply))
		joinCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := future.Join(joinCtx, fA, fB); err != nil {
			result <- fmt.Errorf("Join(future of A, future of B) on B's async worker: %w", err)
			return
		}
		result <- nil
	}); err != nil {
		t.Fatalf("AsyncInvoke: %v", err)
	}
	if err := waitErr(result, live, "outer callback"); err != nil {
		t.Fatalf("%v; want nil (both servers answer at once): B's future is completed by B's worker, which waits in Join "+
			"through A's pool and so does not run it", err)
	}
}
