package asyncproc

import (
	"testing"
	"time"
)

// TestMutualCloseAcrossPools: a callback of pool A closes pool B while a callback of
// B closes A (two Communicators whose callbacks close each other on shutdown). Each Close runs on
// a worker of the other pool: both return, since a callback waiting in a Close of another pool
// is parked in its own pool (closeFromWorker), as one in a Close of its own is. Before, each
// waited (as a Close from outside) for every reserved call of its pool, the other's closer
// included: neither returned, ever.
func TestMutualCloseAcrossPools(t *testing.T) {
	a := newPool(t, Options{Workers: 1, QueueCap: 8})
	b := newPool(t, Options{Workers: 1, QueueCap: 8})
	both := newBarrier(2)
	aClosedB := make(chan struct{})
	bClosedA := make(chan struct{})
	deliver(t, a, func() { both.wait(); b.Close(); close(aClosedB) })
	deliver(t, b, func() { both.wait(); a.Close(); close(bClosedA) })
	timeout := time.After(time.Second)
	var gotA, gotB bool
	for !gotA || !gotB {
		select {
		case <-aClosedB:
			aClosedB, gotA = nil, true
		case <-bClosedA:
			bClosedA, gotB = nil, true
		case <-timeout:
			t.Fatalf("a callback of pool A called B.Close while a callback of B called A.Close: B.Close returned: %v, "+
				"A.Close returned: %v after 1s (pending A=%d, B=%d); want both to return, as two callbacks of one "+
				"pool calling its Close do (each Close waits for the other's caller: deadlock; goroutines leak)",
				gotA, gotB, a.Pending(), b.Pending())
		}
	}
}
