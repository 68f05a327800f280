package asyncproc

import (
	"context"
	"testing"
	"time"
)

// TestCloseOnOtherPoolsWorkerStandsIn: Close of pool A called on a worker of pool B
// (one Communicator's callback closing another Communicator) waits for A's callbacks. One of them,
// a1, waits for a future of B (Pool.Wait: a helped future's Get), completed by B's callback b2,
// queued behind the callback b1 calling A.Close on B's only worker: Close lends B a stand-in
// while it waits, as Wait does, so b2 runs and a1's wait ends. Before, Close did not: b2 never
// ran, a1 waited until its ctx ended, and only then A.Close returned.
func TestCloseOnOtherPoolsWorkerStandsIn(t *testing.T) {
	a := newPool(t, Options{Workers: 1, QueueCap: 8})
	b := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer b.Close()
	defer a.Close()
	fB := make(chan struct{}) // B's future
	a1Waiting := make(chan struct{})
	a1Result := make(chan error, 1)
	deliver(t, a, func() { // a1: waits for B's future
		close(a1Waiting)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		a1Result <- b.Wait(ctx, fB)
	})
	<-a1Waiting
	closed := make(chan struct{})
	deliver(t, b, func() { a.Close(); close(closed) }) // b1: B's worker closes A
	deliver(t, b, func() { close(fB) })                // b2: completes B's future
	var err error
	select {
	case err = <-a1Result:
	case <-time.After(10 * time.Second):
		t.Fatal("a1 never returned from its wait")
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("A.Close on B's worker never returned")
	}
	if err != nil {
		t.Fatalf("a1's wait for B's future (completed by B's callback b2) ended with %v; want nil: b2 was queued behind "+
			"b1, which called A.Close on B's only worker, and Close (unlike Wait) started no stand-in for B, so B's "+
			"callbacks waited for A's, which waited for B's", err)
	}
}
