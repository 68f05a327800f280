package asyncproc

import (
	"runtime"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestOneDelivererKeepsItsOrderAcrossTheOverflow: with one worker, the callbacks one goroutine
// delivers run in the order it delivered them, also when more wait than the channel holds (the
// overflow list) and the worker drains them meanwhile. A net thread delivers a connection's
// pushes and replies this way, and a pool of one worker (async-threads = 1) is how a user keeps
// them in order. Before, a Deliver that found room in the channel (a worker had just received,
// and had not yet moved the overflow's oldest in) went ahead of the calls still in the overflow.
func TestOneDelivererKeepsItsOrderAcrossTheOverflow(t *testing.T) {
	const n = 3 * maxChan
	p := newPool(t, Options{Workers: 1, QueueCap: 2 * n})
	defer p.Close()
	b := newBlocker(1)
	b.occupy(t, p, 1)

	got := make([]int, 0, n)
	done := make(chan struct{})
	deliver := func(i int) {
		if err := p.Reserve(); err != nil {
			t.Fatalf("Reserve %d: %v", i, err)
		}
		p.Deliver(&call.Call{Finish: func(*call.Call) {
			got = append(got, i) // the only worker: no race
			if i == n-1 {
				close(done)
			}
		}})
	}
	// More than the channel holds while the worker is held, then the rest while it drains.
	for i := range maxChan + maxChan/2 {
		deliver(i)
	}
	close(b.release)
	for i := maxChan + maxChan/2; i < n; i++ {
		deliver(i)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("the %d callbacks did not all run within 30s; goroutines:\n%s", n, buf[:runtime.Stack(buf, true)])
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("callback %d ran %dth (%d of %d delivered before it ran after it): want delivery order",
				v, i, countAfter(got[i+1:], v), n)
		}
	}
}

// countAfter counts the entries of rest below v.
func countAfter(rest []int, v int) int {
	k := 0
	for _, r := range rest {
		if r < v {
			k++
		}
	}
	return k
}
