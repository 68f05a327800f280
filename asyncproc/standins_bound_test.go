package asyncproc

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestPollingGetBoundsStandIns: with Workers 1, a callback A that polls a future with a short ctx
// (Get in a loop, each ending with DeadlineExceeded) is one callback waiting: one stand-in at most
// runs callbacks for it, so while A polls at most one other callback runs. Before, each Get
// started a new stand-in, which finished the (slow) callback it picked up after its Get ended
// while the next Get started another: the pool ran one slow callback per poll at once, however
// few workers it had.
func TestPollingGetBoundsStandIns(t *testing.T) {
	const slow = 40
	p := newPool(t, Options{Workers: 1, QueueCap: 2 * slow})
	defer p.Close()
	release := make(chan struct{})
	var running, most, whilePolling atomic.Int64
	aDone := make(chan struct{})
	never := make(chan struct{}) // the future A polls; completes after the test looked
	deliver(t, p, func() {       // A
		defer close(aDone)
		for range slow {
			deliver(t, p, func() { // a slow callback, the kind a stand-in may pick up
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				select {
				case <-release:
				case <-time.After(5 * time.Second):
				}
				running.Add(-1)
			})
		}
		for range slow {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
			_ = p.Wait(ctx, never) // a helped future's Get that times out: polling
			cancel()
		}
		whilePolling.Store(most.Load()) // once A returns, its worker is free to run one more
	})
	select {
	case <-aDone:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("A's polling loop did not end")
	}
	got := whilePolling.Load()
	close(release)
	if got > 1 {
		t.Fatalf("one-worker pool, one callback polling a future (%d Gets with a 2ms ctx): %d other callbacks ran at once; "+
			"want at most 1 (one stand-in for the one waiting callback): each Get's stand-in goes on running the "+
			"callback it picked up after the Get ends, and the next Get starts another", slow, got)
	}
}
