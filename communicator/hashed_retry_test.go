package communicator_test

import (
	"net"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestHashedRetryFollowsHash: WithHash promises that "calls with the same code go
// to the same net thread and the same endpoint (while the endpoint list is unchanged)". The list
// is a, b, c and a port that refuses connections (x); the code falls on x (list[code % 4], TarsCpp
// order). The first call with the code goes to x, its connect is refused and, with retries = 1,
// ObjectProxy.retry sends it on. The hash's own fallback for a code whose endpoint is down (the
// mod hash's rehash, TarsCpp's getHashProxyForNormal: active[code % 4] is x, so x is dropped and
// the code goes to healthy[code % 3]) is where every later call with that code goes, and where
// the retry goes. Before, the retry went to pickUntried's next endpoint in round-robin turn,
// ignoring the code: the call was served by an endpoint that does not own its code (a shard, a
// cache), and the next calls with the same code by another.
func TestHashedRetryFollowsHash(t *testing.T) {
	gs := map[string]*greeter{}
	for _, id := range []string{"a", "b", "c"} {
		gs[id] = startGreeter(t, id, serverOpt{})
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := l.Addr().String()
	_ = l.Close()

	// The list in TarsCpp order, and which greeter each healthy endpoint is.
	var eps []endpoint.Endpoint
	who := map[endpoint.Endpoint]string{}
	var strs []string
	for id, g := range gs {
		e, err := endpoint.ParseEndpoint(g.endpoint())
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e)
		who[e] = id
		strs = append(strs, g.endpoint())
	}
	dead, err := endpoint.ParseEndpoint(tcpEndpoint(deadAddr))
	if err != nil {
		t.Fatal(err)
	}
	eps = append(eps, dead)
	strs = append(strs, tcpEndpoint(deadAddr))
	endpoint.SortTars(eps)
	var healthy []endpoint.Endpoint
	ix := -1
	for i, e := range eps {
		if e == dead {
			ix = i
			continue
		}
		healthy = append(healthy, e)
	}
	// A code that falls on x, and whose fallback is not where a fresh proxy's first retry goes in
	// turn (the endpoint after position 0 of the healthy ones, or of the whole list when x is
	// first: healthy[1], or healthy[0] when ix is 0), so that the two rules disagree.
	turn := func(k uint64) bool { return k == 1 || ix == 0 && k == 0 }
	var code uint64
	for code = 0; code%4 != uint64(ix) || turn(code%3); code++ {
	}
	want := who[healthy[code%3]]

	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Health.MaxConnectFail = 1000 // x stays in rotation: only its reconnect backoff keeps calls away
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "hash", Retries: 1}}
	})
	sp := proxyToAddrs(t, comm, strs...)
	ctx := testCtx(t)

	from, err := sayHello(ctx, sp, "h", 0, servantproxy.WithHash(code))
	if err != nil {
		t.Fatalf("hashed call (code %d, on the refusing endpoint) failed: %v; want it retried", code, err)
	}
	if n := connFails(comm, deadAddr); n == 0 {
		t.Fatal("the first call did not go to the refusing endpoint: the test did not exercise a retry")
	}
	// While x's reconnect backoff runs, a new call with the same code takes the hash's fallback.
	next, err := sayHello(ctx, sp, "h", 1, servantproxy.WithHash(code))
	if err != nil {
		t.Fatalf("second hashed call: %v", err)
	}
	if from != want {
		t.Fatalf("the retried call with code %d was served by %s, the next call with the same code by %s; "+
			"the code's fallback (mod hash over the healthy ones, TarsCpp's rehash) is %s: a retried hashed call "+
			"should go where its code goes", code, from, next, want)
	}
}
