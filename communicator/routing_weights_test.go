package communicator_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/conf"
)

// TestStaticWeightClampedTo100: TarsCpp's TC_Endpoint clamps the weight of an
// endpoint whose weight type is not 0 to 100 (tc_clientsocket.cpp, TC_Endpoint::parse and init:
// `_weight = (_weight > 100 ? 100 : _weight)`), and the registry clamps -w the same way. So
// "-w 200 -v 1" and "-w 100 -v 1" weigh the same to a TarsCpp client: its static-weight list is
// [10,10] and the calls alternate, as here. Before, tarscomm kept 200 (weightOf returned it as
// is) and gave the first endpoint twice the calls.
func TestStaticWeightClampedTo100(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	b := startGreeter(t, "b", serverOpt{})
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1 })
	sp := proxyToAddrs(t, comm, a.endpoint()+" -w 200 -v 1", b.endpoint()+" -w 100 -v 1")
	ctx := testCtx(t)
	got := map[string]int{}
	const calls = 40 // two passes of TarsCpp's 20-entry list
	for i := range calls {
		from, err := sayHello(ctx, sp, "w", uint64(i))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		got[from]++
	}
	if got["a"] != calls/2 || got["b"] != calls/2 {
		t.Fatalf("%d calls over -w 200 -v 1 (a) and -w 100 -v 1 (b) went %v; a TarsCpp client clamps "+
			"the weight to 100 and sends %d to each", calls, got, calls/2)
	}
}

// TestAllZeroStaticWeightsDirect: in a proxy string (a direct proxy) every endpoint
// says "-w 0 -v 1". TarsCpp drops endpoints of weight <= 0 only for registry lists
// (EndpointManager::updateEndpoints: `if(!_direct && _weightType == E_STATIC_WEIGHT &&
// iter->weight() <= 0) continue;`); for a direct proxy they stay in _activeProxys, the weighted
// list is empty, and getWeightedForNormal falls back to round robin over them: the calls are
// served, as here. Before, NewList dropped them whatever the list's origin, so the proxy had no
// endpoint and every call failed with ErrNoEndpoint.
func TestAllZeroStaticWeightsDirect(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	b := startGreeter(t, "b", serverOpt{})
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1 })
	sp := proxyToAddrs(t, comm, a.endpoint()+" -w 0 -v 1", b.endpoint()+" -w 0 -v 1")
	ctx := testCtx(t)
	got := map[string]int{}
	for i := range 10 {
		from, err := sayHello(ctx, sp, "z", uint64(i))
		if err != nil {
			t.Fatalf("call %d over two direct endpoints of -w 0 -v 1 failed: %v; a TarsCpp client keeps "+
				"them for a direct proxy and sends the calls round robin", i, err)
		}
		got[from]++
	}
	if got["a"] == 0 || got["b"] == 0 {
		t.Fatalf("calls went %v; a TarsCpp client sends them round robin over both", got)
	}
}
