package communicator_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/stats"
)

// TestStatsAfterCloseAreFinal: after Close, Stats holds every net thread's final counts: the
// calls made, the threads and the endpoint, as a Prometheus scrape or a last report reads them.
// Before, it left every thread out after Close, and with them every call they counted (a
// collector that had not scraped before the Close exposed none of them).
func TestStatsAfterCloseAreFinal(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 2 })
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	const calls = 40
	for i := range calls {
		if _, err := sayHello(ctx, sp, "s", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	ok := func(s stats.Snapshot) (n uint64) {
		for _, c := range s.Calls {
			n += c.Results[stats.OK]
		}
		return n
	}
	before := comm.Stats()
	if got := ok(before); got != calls || len(before.Threads) != 2 {
		t.Fatalf("before Close: %d ok calls on %d threads, want %d on 2", got, len(before.Threads), calls)
	}
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // and again: the final counts stay
		after := comm.Stats()
		if got := ok(after); got != calls || len(after.Threads) != 2 {
			t.Fatalf("Stats %d after Close: %d ok calls on %d threads, want %d on 2", i+1, got, len(after.Threads), calls)
		}
		var sent uint64
		for _, th := range after.Threads {
			sent += th.Writes
		}
		if sent == 0 || len(after.Endpoints) == 0 {
			t.Fatalf("Stats %d after Close: %d writes, %d endpoint entries; want the threads' counters and the endpoint", i+1, sent, len(after.Endpoints))
		}
		if after.Taken.Before(before.Taken) {
			t.Fatalf("Stats after Close taken at %v, before the one before it (%v)", after.Taken, before.Taken)
		}
	}
}
