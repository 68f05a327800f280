package communicator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// TestStatsForgetGoneEndpoints: a servant whose endpoint is replaced by naming updates (a
// rolling deploy: every instance gets a new address) keeps the call counts of the endpoints
// that left only for the retention (WithStatsRetention): then Stats().Calls holds the endpoint
// there is, and the endpoints that left are gone from every net thread. Before, every net
// thread's stats.Recorder kept one entry per (servant, endpoint) it ever called, forever, and
// each Stats (the debug page, the stat report, Prometheus) copied, sorted and merged them all.
func TestStatsForgetGoneEndpoints(t *testing.T) {
	const rounds = 12
	gs := make([]*greeter, rounds)
	for i := range gs {
		gs[i] = startGreeter(t, fmt.Sprintf("g%d", i), serverOpt{})
	}
	src := &pushSource{ready: make(chan struct{})}
	cfg := conf.Default()
	livenessTimeouts(&cfg)
	cfg.NetThread = 2
	c, err := communicator.New(cfg, communicator.WithNaming(src), communicator.WithStatsRetention(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sp, err := c.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	go func() {
		<-src.ready
		src.send(gs[0])
	}()
	for i, g := range gs {
		if i > 0 {
			src.send(g) // the list is now g alone: the previous endpoint left
		}
		ok := false
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
			from, err := sayHello(ctx, sp, "x", uint64(i))
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
			if from == g.id {
				ok = true
				break
			}
		}
		if !ok {
			t.Fatalf("round %d: calls did not reach %s within 5s of the update", i, g.id)
		}
	}
	// The endpoints that left have no call left: their counts go once they stood still for the
	// retention (a liveness bound of seconds).
	var callEps, connEps map[string]bool
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		s := c.Stats()
		callEps, connEps = map[string]bool{}, map[string]bool{}
		for _, x := range s.Calls {
			if x.Servant == servant {
				callEps[x.Endpoint] = true
			}
		}
		for _, x := range s.Endpoints {
			if x.Servant == servant {
				connEps[x.Endpoint] = true
			}
		}
		if len(connEps) <= 1 && len(callEps) <= 1 {
			break
		}
	}
	if len(callEps) != 1 || len(connEps) != 1 {
		t.Fatalf("after %d updates that each replaced the servant's only endpoint, Stats().Calls keeps %d endpoints of it "+
			"(its connections part %d): want the one in the list, the counts of those that left dropped after the retention",
			rounds, len(callEps), len(connEps))
	}
	for ep := range callEps {
		if !connEps[ep] {
			t.Fatalf("Stats().Calls keeps endpoint %s, which has no connection; want the one in the list (%v)", ep, connEps)
		}
	}
}
