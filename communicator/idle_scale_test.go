package communicator_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestIdleScaleGuard (a guard: it passed when written; nothing else tests it): a Communicator with 4
// net threads and 40 proxies of 3 endpoints each, every one of the 480 AdapterProxies
// connected, then left idle. What the idle client costs must not grow with what it holds:
// no goroutine per proxy, endpoint or connection (ARCHITECTURE.md lists the goroutines a
// Communicator starts: none per proxy without a naming watch); the chores that walk every
// ObjectProxy and AdapterProxy every 100 ms allocate nothing (an allocation per AdapterProxy per
// chore would be ~24000 a second here); and without keepalive nothing is written.
func TestIdleScaleGuard(t *testing.T) {
	gs := []*greeter{startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{}), startGreeter(t, "c", serverOpt{})}
	eps := make([]string, len(gs))
	for i, g := range gs {
		eps[i] = g.endpoint()
	}
	c := newComm(t, func(cfg *conf.Config) { cfg.NetThread = 4; livenessTimeouts(cfg) })
	settle := func() int {
		n := runtime.NumGoroutine()
		for end := time.Now().Add(live); time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m == n {
				return n
			}
			n = m
		}
		return n
	}
	g1 := settle()
	const proxies = 40
	ctx := testCtx(t)
	for i := range proxies {
		var sp servantproxy.ServantProxy
		if err := c.StringToProxy(fmt.Sprintf("%s#%d@%s", servant, i, strings.Join(eps, ":")), &sp); err != nil {
			t.Fatal(err)
		}
		// Enough calls for round robin over 4 threads x 3 endpoints to reach each.
		for k := range 24 {
			rsp := new(hellopb.HelloReply)
			if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "w", Seq: uint64(k)}, rsp); err != nil {
				t.Fatalf("proxy %d call %d: %v", i, k, err)
			}
		}
	}
	g2 := settle()
	s0 := c.Stats()
	conns := 0
	var out0 uint64
	for _, th := range s0.Threads {
		conns += th.Connections
		out0 += th.BytesOut
	}
	t.Logf("goroutines: communicator alone %d, with %d proxies and %d connections %d", g1, proxies, conns, g2)
	if conns < proxies*len(gs) {
		t.Fatalf("only %d connections open, want at least %d for the test to mean anything", conns, proxies*len(gs))
	}
	if g2 > g1+2 {
		t.Errorf("goroutines grew from %d to %d with %d idle proxies and %d connections; want no goroutine per proxy or connection", g1, g2, proxies, conns)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	time.Sleep(time.Second)
	runtime.ReadMemStats(&m1)
	var out1 uint64
	for _, th := range c.Stats().Threads {
		out1 += th.BytesOut
	}
	mallocs := m1.Mallocs - m0.Mallocs
	t.Logf("one idle second: %d allocations, %d bytes written", mallocs, out1-out0)
	if mallocs > 1000 {
		t.Errorf("%d allocations in one idle second with %d idle connections; want about 0 (chores must not allocate per AdapterProxy)", mallocs, conns)
	}
	if out1 != out0 {
		t.Errorf("an idle client without keepalive wrote %d bytes in one second; want 0", out1-out0)
	}
}
