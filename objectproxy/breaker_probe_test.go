package objectproxy_test

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// tripA sends sequential "trip" calls hashed to a until a's breaker is open.
func tripA(t *testing.T, th *netthread.Thread, o *objectproxy.ObjectProxy, eps []endpoint.Endpoint, a *rawPeer) {
	t.Helper()
	code := codeFor(eps, a.ep)
	for range 25 {
		addr, _, _ := wait(t, submit(t, th, o, "trip", true, code, 5*time.Second))
		if addr != a.addr {
			break
		}
	}
	if n := a.count("trip"); n != 20 {
		t.Fatalf("a got %d trip calls before its breaker opened, want 20 (minCalls)", n)
	}
}

func breakerOf(th *netthread.Thread, o *objectproxy.ObjectProxy, addr string) (st adapterproxy.BreakerStats) {
	runOn(th, func() {
		for _, ap := range o.Adapters() {
			if ap.Addr() == addr {
				st = ap.BreakerStats()
			}
		}
	})
	return st
}

// TestBreakerProbeOutcomeIsTheProbes: a half-open breaker is closed or isolated again by the
// outcome of its probe only ("once the isolation ends, one call is let through, and its outcome
// closes the breaker or isolates the endpoint again"). Here a call sent to a before the breaker
// opened fails while the probe is out, then the probe succeeds: a is back. The guard used to take
// that stale failure for the probe's, isolate a again for twice as long, and then ignore the
// probe's own success.
func TestBreakerProbeOutcomeIsTheProbes(t *testing.T) {
	var held struct {
		sync.Mutex
		req *codec.RequestPacket
	}
	a := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		switch req.FuncName {
		case "old": // sent before the breaker opened: held
			r := *req
			held.Lock()
			held.req = &r
			held.Unlock()
		case "trip":
			s.reply(c, req, codec.RetServerDecode)
		case "probe":
			// The old call fails now, while the probe is out; then the probe succeeds.
			held.Lock()
			old := held.req
			held.Unlock()
			if old != nil {
				s.reply(c, old, codec.RetServerDecode)
			}
			s.reply(c, req, 0)
		default:
			s.reply(c, req, 0)
		}
	})
	b := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, 0) })
	eps := []endpoint.Endpoint{a.ep, b.ep}
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, eps, objectproxy.Options{Guard: objectproxy.Guard{Breaker: adapterproxy.DefaultBreaker()}})
	code := codeFor(eps, a.ep)

	old := submit(t, th, o, "old", true, code, 10*time.Second)
	for a.count("old") == 0 {
		time.Sleep(time.Millisecond)
	}
	tripA(t, th, o, eps, a)
	if st := breakerOf(th, o, a.addr); !st.Open || st.Trips != 1 {
		t.Fatalf("after the trip calls: %+v, want open after one trip", st)
	}
	time.Sleep(300 * time.Millisecond) // the first isolation (100ms) is over
	addr, ret, err := wait(t, submit(t, th, o, "probe", true, code, 5*time.Second))
	if addr != a.addr || ret != 0 || err != nil {
		t.Fatalf("the probe went to %s (ret %d, err %v), want a success from a %s", addr, ret, err, a.addr)
	}
	if _, ret, _ := wait(t, old); ret != codec.RetServerDecode {
		t.Fatalf("the old call ended with %d", ret)
	}
	st := breakerOf(th, o, a.addr)
	if st.Open || st.Trips != 1 {
		t.Errorf("a answered its probe with a success, yet its breaker is %+v: the failure of a call sent before "+
			"the trip was taken for the probe's outcome and isolated it again (want closed, 1 trip)", st)
	}
}

// TestBreakerPingLeavesProbe: with keep-alive on, the keepalive ping an idle isolated endpoint
// sends after its isolation does not take the breaker's probe slot: the first user call after the
// isolation goes to the endpoint. The ping used to take the slot (send picked it like a user
// call) while its reply never reached the breaker, so user calls were refused for a second after
// every ping and the endpoint's revival waited as long as keepalive ran.
func TestBreakerPingLeavesProbe(t *testing.T) {
	a := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		if req.FuncName == "trip" {
			s.reply(c, req, codec.RetServerDecode)
			return
		}
		s.reply(c, req, 0)
	})
	b := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, 0) })
	eps := []endpoint.Endpoint{a.ep, b.ep}
	th := rawThread(t, netthread.Options{KeepAlive: 20 * time.Millisecond})
	o := rawObj(t, th, eps, objectproxy.Options{Guard: objectproxy.Guard{Breaker: adapterproxy.DefaultBreaker()}})
	code := codeFor(eps, a.ep)
	tripA(t, th, o, eps, a)
	time.Sleep(400 * time.Millisecond) // the isolation (100ms) is long over; no user call went to a since
	addr, _, err := wait(t, submit(t, th, o, "probe", true, code, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if addr != a.addr {
		t.Errorf("the first call hashed to a after its isolation went to %s, not to a (%s): a keepalive ping "+
			"took the breaker's probe slot (breaker %+v)", addr, a.addr, breakerOf(th, o, a.addr))
	}
}
