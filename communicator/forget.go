package communicator

import (
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/stats"
)

// Forgetting the counts of endpoints that left. Every net thread counts the calls of each
// (servant, endpoint) it sent calls to (stats.Recorder); an endpoint that left its servant's list
// (a rolling deploy gives every instance a new address) would keep its counts, a metric series
// and a row of the debug page for good, and every snapshot would copy them: what the client holds
// would follow the addresses seen since it started, not the endpoints there are.
//
// So Stats, whenever it has every net thread's part, also notes the pairs that have counts but no
// connection on any thread (the snapshot's Endpoints: the endpoint is in no list), and since when
// their counts stand still. Those that stood still for the retention are dropped on every net
// thread, in the same Stats call, before any later snapshot is taken (Stats calls run one at a
// time, and each thread runs what it is asked in order): no snapshot ever holds a pair on some
// threads and not on others. A pair that comes back is counted from zero in counters of a new
// Gen (stats.Counters), which Snapshot.Delta (the stat report) takes whole; a Prometheus
// counter starts again from zero, which Prometheus reads as a reset when it scrapes a value
// lower than the last. A timer runs Stats every half retention, so that a client nobody reads
// stats from forgets too.

// minRetention is the least time the counts of an endpoint that left stay (the default is
// longer: defaultRetention).
const minRetention = 10 * time.Millisecond

// defaultRetention is how long, without WithStatsRetention, the counts of an endpoint that left
// stay after they last changed: long enough for any reader (the stat report, a Prometheus scrape,
// the debug page) to have seen their last values, and at least two report intervals.
func defaultRetention(reportInterval time.Duration) time.Duration {
	return max(10*time.Minute, 2*reportInterval)
}

// pairKey names the counts of a servant's calls to an endpoint.
type pairKey struct{ servant, endpoint string }

// stillSince is what forgetting knows of a pair without a connection: its calls counted, and
// since when that count has stood still.
type stillSince struct {
	at    time.Time
	calls uint64
}

// forgetting is the Communicator's state for forgetting (guarded by its statsMu).
type forgetting struct {
	retention time.Duration
	still     map[pairKey]stillSince
	timer     *time.Timer    // runs sweep; nil without stats
	sweeping  sync.WaitGroup // a sweep under way (Close waits for it)
}

// startForgetting arms the timer that sweeps while nobody reads stats.
func (c *Communicator) startForgetting(retention time.Duration) {
	c.forget.retention = retention
	c.forget.still = map[pairKey]stillSince{}
	c.forget.timer = time.AfterFunc(c.sweepEvery(), c.sweep)
}

func (c *Communicator) sweepEvery() time.Duration { return max(c.forget.retention/2, minRetention) }

// sweep is the timer's: a Stats round (which forgets), then the timer again, until Close.
func (c *Communicator) sweep() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.forget.sweeping.Add(1)
	c.mu.Unlock()
	defer c.forget.sweeping.Done()
	c.Stats()
	c.mu.Lock()
	if !c.closed {
		c.forget.timer.Reset(c.sweepEvery())
	}
	c.mu.Unlock()
}

// stopForgetting stops the timer and waits for a sweep under way. Close calls it after marking
// the Communicator closed.
func (c *Communicator) stopForgetting() {
	if c.forget.timer != nil {
		c.forget.timer.Stop()
		c.forget.sweeping.Wait()
	}
}

// forgetStill notes, from s (a snapshot with every net thread's part, taken at s.Taken), the
// pairs without a connection, and drops on every thread those whose counts stood still for the
// retention. The caller holds statsMu.
func (c *Communicator) forgetStill(s *stats.Snapshot) {
	live := make(map[pairKey]bool, len(s.Endpoints))
	for _, e := range s.Endpoints {
		live[pairKey{e.Servant, e.Endpoint}] = true
	}
	calls := map[pairKey]uint64{}
	for i := range s.Calls {
		x := &s.Calls[i]
		if k := (pairKey{x.Servant, x.Endpoint}); x.Endpoint != "" && !live[k] {
			calls[k] += x.Counters.Calls()
		}
	}
	f := &c.forget
	var drop map[pairKey]bool
	for k, n := range calls {
		st, ok := f.still[k]
		switch {
		case !ok || st.calls != n:
			f.still[k] = stillSince{s.Taken, n}
		case s.Taken.Sub(st.at) >= f.retention:
			if drop == nil {
				drop = map[pairKey]bool{}
			}
			drop[k] = true
		}
	}
	for k := range f.still {
		if _, ok := calls[k]; !ok || drop[k] {
			delete(f.still, k) // connected again, or dropped
		}
	}
	if drop == nil {
		return
	}
	which := func(servant, endpoint string) bool { return drop[pairKey{servant, endpoint}] }
	var wg sync.WaitGroup
	for _, t := range c.threads {
		wg.Go(func() { _ = t.ForgetStats(which, statsTimeout) }) // a late thread drops them before its next snapshot
	}
	wg.Wait()
}
