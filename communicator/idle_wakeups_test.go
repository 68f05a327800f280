package communicator_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
)

// TestIdleWakeupsCountDrains: a Communicator whose net threads have no call queued, none
// pending and no connection, for a whole second. Stats().Threads[i].Wakeups is documented as
// "times the loop was woken to drain its queue" (stats/snapshot.go; Prometheus
// tarscomm_netthread_wakeups_total: "Times the net thread was woken to drain its queue."), and
// ARCHITECTURE.md reads it against Requests and HandBacks to judge how well calls share
// wakeups. Nothing was submitted, so no wakeup drained anything: the count must stay (about)
// still. Before, it grew by ~100 a second per thread: the deadline ticker (every
// timeout-check-interval, 10 ms) wakes the loop through the same anchor socket, and OnTraffic
// counted every anchor turn as a wakeup (netthread/handler.go), so an idle client reports a
// steady 100 wakeups/s/thread and a busy one's Requests/Wakeups ratio is skewed by the ticks.
func TestIdleWakeupsCountDrains(t *testing.T) {
	c := newComm(t, func(cfg *conf.Config) { cfg.NetThread = 2 })
	before := c.Stats().Threads
	time.Sleep(time.Second)
	after := c.Stats().Threads
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("stats have %d and %d net threads, want 2", len(before), len(after))
	}
	for i := range after {
		woke := after[i].Wakeups - before[i].Wakeups
		drained := after[i].Requests - before[i].Requests
		if drained != 0 {
			t.Fatalf("thread %d took %d requests from its queue while nothing was called", i, drained)
		}
		if woke > 10 {
			t.Errorf("thread %d: Wakeups grew by %d in one idle second with nothing queued (Requests +%d); "+
				"want (about) 0: Wakeups counts the loop woken to drain its queue, not the deadline ticker's turns",
				i, woke, drained)
		}
	}
}
