package communicator_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// counts sums, over the Communicator's connections to addr (host:port), the calls handed to them
// (a call that moved from one connection to another counts twice) and their failed dials.
func counts(c *communicator.Communicator, addr string) (sent, connFails uint64) {
	for _, e := range c.Stats().Endpoints {
		if e.Endpoint == addr {
			sent += e.Sent
			connFails += e.ConnFails
		}
	}
	return sent, connFails
}

// TestConnectionsUnsentMovesToSibling: one endpoint, connections = 2, retries = 0. The first call
// opens one connection; then the endpoint refuses new connects, so the other connection's dial
// fails with calls queued on it, none of their bytes written. Those calls move to the open
// connection of the same endpoint and succeed: a call that never left the process is not lost to
// one broken connection while its endpoint has another. The greeter sees every call, all on the
// one connection that stayed open. One call at a time, the connections are taken in turn, so the
// first call goes to the idle connection; in a burst, several wait on its dial together.
func TestConnectionsUnsentMovesToSibling(t *testing.T) {
	const conns = 2
	for _, mode := range []string{"serial", "burst"} {
		t.Run(mode, func(t *testing.T) {
			e := startConnsEP(t, "a")
			c := newComm(t, connsConf(1, conns))
			sp := proxyToAddrs(t, c, tcpEndpoint(e.p.Addr()))
			ctx := testCtx(t)
			if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
				t.Fatalf("warm-up call: %v", err)
			}
			e.byConn()
			if err := e.p.Refuse(faultproxy.Closed); err != nil { // the open connection stays
				t.Fatal(err)
			}
			const n = 40
			if mode == "serial" {
				for i := range n {
					if _, err := sayHello(ctx, sp, "serial", uint64(i)); err != nil {
						t.Fatalf("call %d after the endpoint began refusing connects: %v", i, err)
					}
				}
			} else {
				from, errs := burst(t, sp, n, withTimeout(live)...)
				for i, err := range errs {
					if err != nil || from[i] != "a" {
						t.Errorf("burst call %d: from %q, err %v; want a reply from a", i, from[i], err)
					}
				}
			}
			sent, refused := counts(c, e.p.Addr())
			moved := sent - (n + 1)
			if refused == 0 || moved == 0 {
				t.Fatalf("%d dials refused, %d calls moved: the test did not queue a call on a failing connection", refused, moved)
			}
			by := e.byConn()
			total := 0
			for _, k := range by {
				total += k
			}
			if total != n || len(by) != 1 {
				t.Errorf("the greeter saw %d calls on %d connections, want %d on 1: %v", total, len(by), n, by)
			}
			if st := e.p.Stats(); st.Accepts != 1 {
				t.Errorf("proxy accepted %d connections, want 1 (the other was refused)", st.Accepts)
			}
			t.Logf("%d dials refused, %d calls moved to the open connection; calls by connection %v", refused, moved, by)
		})
	}
}

// TestConnectionsUnsentStaysOnEndpoint: two endpoints with two connections each, retries = 2.
// One connection of a is refused its connect while a call waits on it: the call moves to a's
// other connection, which is open, not to b. Calls made one at a time alternate between the
// endpoints (roundrobin), so each greeter sees exactly half of them.
func TestConnectionsUnsentStaysOnEndpoint(t *testing.T) {
	const conns = 2
	a, b := startConnsEP(t, "a"), startConnsEP(t, "b")
	c := newComm(t, func(cfg *conf.Config) {
		cfg.NetThread = 1
		cfg.Servants = map[string]conf.Servant{servant: {Connections: conns, Retries: 2}}
	})
	sp := proxyToAddrs(t, c, tcpEndpoint(a.p.Addr()), tcpEndpoint(b.p.Addr()))
	ctx := testCtx(t)
	for i := range 2 { // one connection of each endpoint
		if _, err := sayHello(ctx, sp, "warm", uint64(i)); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	a.byConn()
	b.byConn()
	if err := a.p.Refuse(faultproxy.Closed); err != nil {
		t.Fatal(err)
	}
	const calls = 20
	for i := range calls {
		if _, err := sayHello(ctx, sp, "x", uint64(i)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, refused := counts(c, a.p.Addr()); refused == 0 {
		t.Fatal("no dial to a was refused: the test did not queue a call on a failing connection")
	}
	count := func(e *connsEP) int {
		n := 0
		for _, k := range e.byConn() {
			n += k
		}
		return n
	}
	if na, nb := count(a), count(b); na != calls/2 || nb != calls/2 {
		t.Errorf("a answered %d calls and b %d, want %d each: a call refused on one of a's connections went to b", na, nb, calls/2)
	}
}

// TestConnectionsUnsentAllFail: every connection of every endpoint is refused its connect. Calls
// queued on them move between the endpoint's connections that are still connecting, at most
// connections-1 times per endpoint, then to the other endpoints as retries allow, and end with
// ErrConnection, well before their deadline: they never bounce between failing connections. No
// call is handed to more than connections x min(retries+1, endpoints) connections.
func TestConnectionsUnsentAllFail(t *testing.T) {
	for _, tc := range []struct{ endpoints, conns, retries int }{{1, 2, 0}, {1, 4, 0}, {2, 3, 2}} {
		t.Run(fmt.Sprintf("endpoints=%d/connections=%d/retries=%d", tc.endpoints, tc.conns, tc.retries), func(t *testing.T) {
			var addrs []string
			for k := range tc.endpoints {
				e := startConnsEP(t, fmt.Sprint(k))
				if err := e.p.Refuse(faultproxy.Closed); err != nil {
					t.Fatal(err)
				}
				addrs = append(addrs, tcpEndpoint(e.p.Addr()))
			}
			c := newComm(t, func(cfg *conf.Config) {
				cfg.NetThread = 1
				cfg.Servants = map[string]conf.Servant{servant: {Connections: tc.conns, Retries: tc.retries}}
			})
			sp := proxyToAddrs(t, c, addrs...)
			const n = 30
			_, errs := burst(t, sp, n, servantproxy.WithTimeout(3*live))
			for i, err := range errs {
				if !errors.Is(err, communicator.ErrConnection) {
					t.Errorf("call %d: err = %v, want ErrConnection (not its deadline)", i, err)
				}
			}
			// No connection ever opened, so no ping was sent: every send counted is a call's.
			sends := uint64(0)
			for _, e := range c.Stats().Endpoints {
				sends += e.Sent
			}
			visits := min(tc.retries+1, tc.endpoints) // endpoints a call may be sent to
			if most := uint64(n * visits * tc.conns); sends > most {
				t.Errorf("%d calls were handed to connections %d times, want at most %d (each to at most %d connections of each of at most %d endpoints)", n, sends, most, tc.conns, visits)
			}
			t.Logf("%d calls were handed to connections %d times", n, sends)
		})
	}
}
