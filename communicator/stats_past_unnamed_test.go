package communicator_test

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
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
			u := startUnnamedPast(t, tc.retention)
			comm, src, live, dead, entry, fails := u.comm, u.src, u.live, u.dead, u.entry, u.fails
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

// unnamedPast is an endpoint (dead) whose port refuses connections, listed beside a live one
// under a Communicator that retries every call to it on the live one (retries = 1, one net
// thread): it has connect failures (fails, once one was seen) and no call counted.
type unnamedPast struct {
	comm       *communicator.Communicator
	sp         *servantproxy.ServantProxy
	src        *pushSource
	live, dead *greeter
	ctx        context.Context
	fails      uint64
}

func startUnnamedPast(t *testing.T, retention time.Duration) *unnamedPast {
	t.Helper()
	u := &unnamedPast{live: startGreeter(t, "live", serverOpt{}), dead: startGreeter(t, "dead", serverOpt{})}
	u.dead.stop(t) // its port refuses connections now
	u.src = &pushSource{ready: make(chan struct{})}
	u.comm = newCommWith(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{servant: {Retries: 1}}
	}, communicator.WithNaming(u.src), communicator.WithStatsRetention(retention))
	sp, err := u.comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	u.sp, u.ctx = sp, testCtx(t)
	first := make(chan error, 1)
	go func() { _, err := sayHello(u.ctx, sp, "x", 0); first <- err }()
	<-u.src.ready
	u.src.send(u.dead, u.live)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a dial to the dead endpoint to fail", func() bool {
		if _, err := sayHello(u.ctx, sp, "x", 1); err != nil {
			t.Fatalf("call: %v (retries take it to the live endpoint)", err)
		}
		e, _ := u.entry()
		u.fails = e.ConnFails
		return u.fails > 0
	})
	for _, c := range u.comm.Stats().Calls {
		if c.Endpoint == u.dead.addr {
			t.Fatalf("a call counted under the dead endpoint: %+v", c)
		}
	}
	return u
}

// entry returns the dead endpoint's entry in a fresh Stats, if it is listed.
func (u *unnamedPast) entry() (stats.Endpoint, bool) {
	for _, e := range u.comm.Stats().Endpoints {
		if e.Endpoint == u.dead.addr {
			return e, true
		}
	}
	return stats.Endpoint{}, false
}
