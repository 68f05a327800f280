package communicator_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/stats"
)

// TestStatsEndpointWithoutCallsLeavesAndReturns: an endpoint that refuses connections, whose
// every call is retried on the live one (retries = 1), counts connect failures but no call. It
// leaves the list and comes back: within the stats retention its counters go on from where they
// were (before, they started again from 0, a Prometheus counter gone down: they were kept only
// for endpoints with call counts); past the retention they are dropped, as call counts are, so
// that the addresses a client has seen do not pile up.
func TestStatsEndpointWithoutCallsLeavesAndReturns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention time.Duration
		kept      bool
	}{
		{"within the retention", time.Hour, true},
		{"past the retention", 50 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := startGreeter(t, "live", serverOpt{})
			dead := startGreeter(t, "dead", serverOpt{})
			dead.stop(t) // its port refuses connections now
			src := &pushSource{ready: make(chan struct{})}
			comm := newCommWith(t, func(c *conf.Config) {
				c.NetThread = 1
				c.Servants = map[string]conf.Servant{servant: {Retries: 1}}
			}, communicator.WithNaming(src), communicator.WithStatsRetention(tc.retention))
			sp, err := comm.Proxy(servant)
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			first := make(chan error, 1)
			go func() { _, err := sayHello(ctx, sp, "x", 0); first <- err }()
			<-src.ready
			src.send(dead, live)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			entry := func() (stats.Endpoint, bool) {
				for _, e := range comm.Stats().Endpoints {
					if e.Endpoint == dead.addr {
						return e, true
					}
				}
				return stats.Endpoint{}, false
			}
			var fails uint64
			waitFor(t, "a dial to the dead endpoint to fail", func() bool {
				if _, err := sayHello(ctx, sp, "x", 1); err != nil {
					t.Fatalf("call: %v (retries take it to the live endpoint)", err)
				}
				e, _ := entry()
				fails = e.ConnFails
				return fails > 0
			})
			for _, c := range comm.Stats().Calls {
				if c.Endpoint == dead.addr {
					t.Fatalf("a call counted under the dead endpoint: %+v", c)
				}
			}
			src.send(live)
			left := time.Now()
			waitFor(t, "the dead endpoint to leave", func() bool { _, ok := entry(); return !ok })
			if !tc.kept {
				// Snapshots (the retention's sweeps, and these) drop it once the retention has passed.
				for time.Since(left) < 4*tc.retention {
					comm.Stats()
					time.Sleep(tc.retention / 4)
				}
				comm.Stats()
			}
			src.send(dead, live) // listed again; no call goes to it before the entry is read
			var back stats.Endpoint
			waitFor(t, "the dead endpoint to be listed again", func() bool {
				var ok bool
				back, ok = entry()
				return ok
			})
			switch {
			case tc.kept && back.ConnFails < fails:
				t.Errorf("connect failures %d when it came back, %d before it left: its counter went down", back.ConnFails, fails)
			case !tc.kept && back.ConnFails != 0:
				t.Errorf("connect failures %d when it came back past the retention (%d before it left), want 0: kept for good", back.ConnFails, fails)
			}
		})
	}
}
