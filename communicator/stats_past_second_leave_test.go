package communicator_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestStatsPastCountersSurviveSecondLeave: endpoint D refuses connections in its first life
// (its calls are retried on the live one, retries = 1: connect failures, no call counted), leaves
// and comes back within the stats retention, so its counters go on (keepPast, 1191649). Its
// second life, with a server there that holds its calls, lasts longer than the retention; it
// leaves again with calls waiting (its connection retires, finishing them), and a Stats runs
// meanwhile. The calls are answered, and D is listed again at once.
//
// Its connect failures, exposed as n while it was listed, must not read less on its return
// (Prometheus would read a reset): within the retention of its last leave, the counters go on.
// Before, the kept entry's leave time was the first leave's (keepPast set it only when a
// connection was gone), so the snapshot taken while the second life's connection finished its
// calls found it "left" longer than the retention ago with no call counts yet, and dropped the
// first life's counters. An entry is seen now whenever a snapshot finds it listed, and not aged
// while a connection of its endpoint finishes calls.
func TestStatsPastCountersSurviveSecondLeave(t *testing.T) {
	leakCheckEach(t)
	const retention = time.Second
	u := startUnnamedPast(t, retention)
	comm, sp, src, live, dead, ctx, entry, fails := u.comm, u.sp, u.src, u.live, u.dead, u.ctx, u.entry, u.fails

	// First leave; back within the retention, now with a server that holds its calls.
	src.send(live)
	left1 := time.Now()
	waitFor(t, "the dead endpoint to leave", func() bool { _, ok := entry(); return !ok })
	back := startGreeter(t, "back", serverOpt{addr: dead.addr, block: true})
	src.send(back, live)
	e, _ := entry()
	waitFor(t, "the endpoint listed again", func() bool { var ok bool; e, ok = entry(); return ok })
	if time.Since(left1) >= retention {
		t.Skipf("the return took %v, past the retention %v: nothing to test", time.Since(left1), retention)
	}
	if e.ConnFails < fails {
		t.Fatalf("connect failures %d on its first return, %d before: the fixed case", e.ConnFails, fails)
	}

	// Calls wait on it (held), and its second life outlasts the retention.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer back.stop(t) // releases the holds, if the test ends early
	waitFor(t, "two calls held by the endpoint", func() bool {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = sayHello(ctx, sp, "h", 2, servantproxy.WithTimeout(20*time.Second))
		}()
		time.Sleep(10 * time.Millisecond)
		e, _ = entry()
		return e.Pending >= 2
	})
	for time.Since(left1) < retention+300*time.Millisecond {
		time.Sleep(20 * time.Millisecond)
	}
	exposed, _ := entry()
	t.Logf("exposed before the second leave: sent %d conn fails %d pending %d", exposed.Sent, exposed.ConnFails, exposed.Pending)

	// Second leave with the calls waiting; Stats (a scrape) while they do.
	src.send(live)
	waitFor(t, "the endpoint to leave again", func() bool { _, ok := entry(); return !ok })
	comm.Stats()
	comm.Stats()
	close(back.release) // the held calls are answered
	wg.Wait()
	src.send(back, live)
	var again stats.Endpoint
	waitFor(t, "the endpoint listed a third time", func() bool { var ok bool; again, ok = entry(); return ok })
	t.Logf("on its return: sent %d conn fails %d", again.Sent, again.ConnFails)
	if again.ConnFails < exposed.ConnFails || again.Sent < exposed.Sent {
		t.Errorf("on its return, right after its second leave: sent %d, connect failures %d; exposed before it: sent %d, "+
			"connect failures %d: the counters went down (the first life's were dropped while its connection finished its calls)",
			again.Sent, again.ConnFails, exposed.Sent, exposed.ConnFails)
	}
}
