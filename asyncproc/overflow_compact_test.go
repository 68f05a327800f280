package asyncproc

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestOverflowCompactsWhileBusy: a pool that stays behind for a long time (its
// callbacks slower than the replies that come, the number waiting held below QueueCap by
// Reserve, but above the channel's maxChan) must hold memory for the callbacks that wait, not for
// every callback that ever passed through the overflow list while it was not empty. Here 8000
// callbacks (plus the worker's lag) wait at every moment (QueueCap 100000: Reserve never refuses) while 200000 pass
// through, one delivered for one run. refill moves calls from the head of the overflow into the
// channel by advancing head, and compacts the slice only once head reaches its end: while the
// overflow is never empty, every Deliver appends for good, 8 bytes per callback, without bound
// (a pool behind for an hour at 50k callbacks/s holds over a GiB of nil pointers). (It failed
// once in make test beside other test runs: the worker, starved, fell 100000 behind and Reserve
// refused; the loop now waits for it beyond twice the callbacks meant to wait.)
// Before, the overflow's array reached a capacity of 236,544 here for about 10,000 waiting in it.
func TestOverflowCompactsWhileBusy(t *testing.T) {
	const (
		waiting = 8000   // callbacks kept waiting: above maxChan, far below QueueCap
		through = 200000 // callbacks that pass through while the pool is behind
	)
	p := New(Options{Workers: 1, QueueCap: 100000})
	tokens := make(chan struct{}, waiting+through+1)
	cb := func(*call.Call) { <-tokens }
	deliver := func() {
		if err := p.Reserve(); err != nil {
			t.Fatalf("Reserve with %d waiting of QueueCap 100000: %v", p.Waiting(), err)
		}
		p.Deliver(&call.Call{Finish: cb})
	}
	for range waiting {
		deliver()
	}
	peak := 0 // the most callbacks ever waiting in the overflow list
	for range through {
		// On a busy machine the worker may fall far behind this loop (the callbacks it may run are
		// all released already): let it catch up rather than reach QueueCap, where Reserve refuses.
		for deadline := time.Now().Add(time.Minute); p.Waiting() > 2*waiting; time.Sleep(100 * time.Microsecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the worker did not run a callback for a minute (%d waiting)", p.Waiting())
			}
		}
		deliver()            // a reply comes...
		tokens <- struct{}{} // ...and one callback ends: as many wait as before
		peak = max(peak, int(p.spilled.Load()))
	}
	p.mu.Lock()
	length, capacity, head := len(p.overflow), cap(p.overflow), p.head
	p.mu.Unlock()
	live := int(p.spilled.Load())
	close(tokens) // let every callback run, then close
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10s")
	}
	t.Logf("overflow: %d callbacks waiting in it (at most %d); slice len %d, cap %d, head %d", live, peak, length, capacity, head)
	if peak <= maxChan/2 {
		t.Fatalf("at most %d callbacks waited in the overflow list: the test meant to keep thousands there", peak)
	}
	// Compacted when the consumed front is at least half: the array holds at most twice the
	// most that waited, and append's growth adds its factor.
	if bound := 4*peak + 2048; capacity > bound {
		t.Errorf("after %d callbacks passed through a pool that stayed behind with %d+ waiting, its overflow list holds "+
			"a slice of cap %d (%d bytes) for at most %d waiting callbacks: want it bounded by the callbacks waiting (cap <= %d), "+
			"not growing with every callback delivered",
			through, waiting, capacity, capacity*8, peak, bound)
	}
}
