package communicator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
)

// keepAlive is keep-alive-interval in the keepalive tests. Keepalive closes a connection whose
// ping is not answered within one interval: 200ms is far above a loopback pong even under -race
// on a busy machine, so only the faults the tests inject close connections.
const keepAlive = 200 * time.Millisecond

// TestKeepAlivePingsIdleConnection leaves a connection idle with keep-alive-interval 200ms: the
// server receives tars_ping about every interval, and the connection stays usable. Without
// keepalive (the default) an idle connection sends nothing.
func TestKeepAlivePingsIdleConnection(t *testing.T) {
	const idle = 10 * keepAlive
	for _, tt := range []struct {
		name     string
		interval time.Duration
		minPings int64
		maxPings int64
	}{
		{name: "on", interval: keepAlive, minPings: int64(idle/keepAlive) / 3, maxPings: int64(idle/keepAlive) * 2},
		{name: "off", interval: 0, minPings: 0, maxPings: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ep := startFaultEP(t, "a")
			comm := newComm(t, faultConf(func(c *conf.Config) { c.KeepAliveInterval = tt.interval }))
			sp := proxyToEPs(t, comm, ep)
			ctx := testCtx(t)
			if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
				t.Fatal(err)
			}
			// The proxy counts a chunk once its write to the server returned, which can be after
			// the reply came back: let the warm-up's request be counted first (CI saw its 61
			// bytes counted as sent while idle).
			up0 := settledBytesUp(t, ep.p)
			pings0 := ep.g.pings.Load()
			time.Sleep(idle)
			pings, up := ep.g.pings.Load()-pings0, ep.p.Stats().BytesUp-up0
			t.Logf("keep-alive-interval %v: %d pings, %d bytes sent in %v of idleness", tt.interval, pings, up, idle)
			if pings < tt.minPings || pings > tt.maxPings {
				t.Errorf("server got %d pings in %v idle, want between %d and %d", pings, idle, tt.minPings, tt.maxPings)
			}
			if tt.interval == 0 && up != 0 {
				t.Errorf("an idle connection without keepalive sent %d bytes, want 0", up)
			}
			if _, err := sayHello(ctx, sp, "after", 1); err != nil {
				t.Fatalf("call after the idle period: %v", err)
			}
			if got := ep.p.Stats().Accepts; got != 1 {
				t.Errorf("proxy accepted %d connections, want 1: pings must keep the connection, not replace it", got)
			}
		})
	}
}

// TestKeepAliveDetectsBlackHole black-holes an idle connection (a peer or middlebox that vanished
// without a FIN or RST): with keep-alive-interval 200ms the unanswered ping makes the client
// close the connection within a few intervals, and once traffic passes again the next call
// works on a new connection.
func TestKeepAliveDetectsBlackHole(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) { c.KeepAliveInterval = keepAlive }))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	closes0 := ep.p.Stats().ClientCloses
	ep.p.BlackHole(faultproxy.Both)
	// Idle for one interval, a ping, no answer for one interval: closed. Allow a few intervals.
	limit := 5*keepAlive + slack
	took := eventually(t, limit+time.Second, "the client closes the black-holed connection", func() bool {
		return ep.p.Stats().ClientCloses > closes0
	})
	t.Logf("the client closed the black-holed connection after %v", took)
	within(t, "noticing the black-holed connection", took, limit)
	if err := ep.p.Pass(); err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(ctx, sp, "after", 1); err != nil {
		t.Fatalf("call after the black hole cleared: %v", err)
	}
}

// TestKeepAliveFailsPendingCallOnDeadConnection black-holes a connection while a call with a
// long timeout waits on it: the keepalive notices the dead connection and the call fails with
// ErrConnection within a few intervals, long before its 3s timeout.
func TestKeepAliveFailsPendingCallOnDeadConnection(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.KeepAliveInterval = keepAlive
		c.SyncInvokeTimeout = 3 * time.Second
	}))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.BlackHole(faultproxy.Both)
	start := time.Now()
	_, err := sayHello(ctx, sp, "lost", 1)
	took := time.Since(start)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("call on a silently dead connection: err = %v after %v, want ErrConnection", err, took)
	}
	// ErrConnection (not ErrTimeout at 3s) says keepalive ended it; how soon is a figure.
	within(t, "failing the call on a silently dead connection", took, 5*keepAlive+slack)
}

// settledBytesUp returns p's BytesUp once it has stopped changing for 50ms: the proxy's writer
// counts a chunk after its write returned, which may come after the answer to it.
func settledBytesUp(t *testing.T, p *faultproxy.Proxy) int64 {
	t.Helper()
	var up int64
	waitFor(t, "the proxy's count of bytes sent settles", func() bool {
		prev := p.Stats().BytesUp
		time.Sleep(50 * time.Millisecond)
		up = p.Stats().BytesUp
		return up == prev
	})
	return up
}
