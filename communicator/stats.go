package communicator

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/debugpage"
	"github.com/tarscomm/tarscomm/stats"
)

// statsTimeout bounds the wait for one net thread's part of a snapshot.
const statsTimeout = time.Second

// Stats returns a snapshot of what the Communicator counted: calls per (servant, function,
// endpoint) by result with their latency, each net thread's counters, and the state and health
// of every endpoint's connection on every net thread. Each net thread copies its own counters on
// its loop, all at once; Stats merges them. A net thread that does not answer within a second is
// left out. The counts of an endpoint that left its servant's list are dropped once they have
// stood still for the retention (WithStatsRetention; forget.go).
// The calls and endpoints of the library's own servants (the stat and property services it
// reports to) are left out, calls the user makes to those servants too; the net threads'
// counters include their traffic.
// Safe for concurrent use, also after Close: then the net threads' counts are final (a Stats
// taken while Close runs may leave out a thread that is stopping).
func (c *Communicator) Stats() stats.Snapshot { return c.snapshot(false) }

// snapshot is Stats; with endPeriod, each net thread also ends its recorder's period as it copies
// its counters (netthread.Thread.SnapshotEndingPeriod): the stat reporter's source, whose Deltas
// then carry each interval's exact greatest and least latency.
func (c *Communicator) snapshot(endPeriod bool) stats.Snapshot {
	// The threads are asked together: a thread that does not answer (busy, or its loop gone
	// during Close) costs statsTimeout once, not once per thread.
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	got := make([]stats.Snapshot, len(c.threads))
	ok := make([]bool, len(c.threads))
	var wg sync.WaitGroup
	for i, t := range c.threads {
		wg.Go(func() {
			snap := t.Snapshot
			if endPeriod {
				snap = t.SnapshotEndingPeriod
			}
			s, err := snap(statsTimeout)
			got[i], ok[i] = s, err == nil
		})
	}
	wg.Wait()
	parts := make([]stats.Snapshot, 0, len(c.threads)+1)
	for i := range got {
		if ok[i] {
			parts = append(parts, got[i])
		}
	}
	if c.shared != nil {
		parts = append(parts, c.shared.Snapshot())
	}
	s := stats.Merge(parts...)
	if s.Taken.IsZero() {
		s.Taken = time.Now()
	}
	if c.shared != nil && !slices.Contains(ok, false) {
		c.forgetStill(&s) // forget.go: with every thread's part only
	}
	c.mu.Lock()
	if len(c.internal) > 0 {
		s.Calls = slices.DeleteFunc(s.Calls, func(x stats.Call) bool { return c.internal[x.Servant] })
		s.Endpoints = slices.DeleteFunc(s.Endpoints, func(x stats.Endpoint) bool { return c.internal[x.Servant] })
	}
	c.mu.Unlock()
	return s
}

// DebugHandler returns the debug page: an http.Handler that shows Stats (net threads,
// connections, endpoints and their health, per-function latency and errors) and the
// configuration in force (each servant's table with the values that apply to it), as HTML, or
// as JSON with ?format=json. The library starts no HTTP server: mount the handler on yours,
// e.g. http.Handle("/debug/tarscomm/", comm.DebugHandler()).
func (c *Communicator) DebugHandler() http.Handler {
	return debugpage.Handler(c.Stats, debugpage.Options{Title: "tarscomm", Config: c.effectiveConfig(), Balancers: balancerSettings()})
}

// effectiveConfig is the configuration with each servant's table as it applies
// (conf.ForServant): the communicator's values for the keys it leaves unset, and the defaults
// of keys whose 0 means one (backup-budget), so that the debug page shows what is in force.
func (c *Communicator) effectiveConfig() conf.Config {
	cfg := c.cfg
	if len(c.cfg.Servants) > 0 {
		cfg.Servants = make(map[string]conf.Servant, len(c.cfg.Servants))
		for name := range c.cfg.Servants {
			cfg.Servants[name] = c.cfg.ForServant(name)
		}
	}
	return cfg
}
