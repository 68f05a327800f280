package communicator_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// healthTry is health.try-interval in the health tests.
const healthTry = 300 * time.Millisecond

// TestHealthBlackHoledEndpoint black-holes one of three endpoints under sustained load. Once the
// health rule has seen enough timeouts, the endpoint gets almost no calls (one probe per try
// interval) while the other two take the load; when the proxy passes traffic again, the endpoint
// gets calls again within the try interval (plus the probe's timeout and slack), and soon its
// share. The rule is either consecutive failures (TarsCpp frequenceFailInvoke) or the timeout
// ratio of a check window (minTimeoutInvoke / radio).
func TestHealthBlackHoledEndpoint(t *testing.T) {
	const callTimeout = 100 * time.Millisecond
	tests := []struct {
		name   string
		health conf.Health
	}{
		{name: "consecutive failures", health: conf.Health{
			MinTimeoutInvoke: 1000, CheckTimeoutInterval: time.Minute, TimeoutRatio: 1, // rule 1 off
			FrequentFailInvoke: 3, MinFrequentFailTime: 0,
			TryInterval: healthTry, MaxConnectFail: 1,
		}},
		{name: "timeout ratio", health: conf.Health{
			MinTimeoutInvoke: 2, CheckTimeoutInterval: 200 * time.Millisecond, TimeoutRatio: 0.2,
			FrequentFailInvoke: 1000000, MinFrequentFailTime: time.Hour, // rule 2 off
			TryInterval: healthTry, MaxConnectFail: 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
			comm := newComm(t, faultConf(func(c *conf.Config) { c.Health = tt.health }))
			sp := proxyToEPs(t, comm, eps...)
			bad := eps[1]
			for i := range 6 { // warm up: every endpoint connected and answering
				if _, err := sayHello(testCtx(t), sp, "warm", uint64(i)); err != nil {
					t.Fatal(err)
				}
			}

			bad.p.BlackHole(faultproxy.Both)
			opt := servantproxy.WithTimeout(callTimeout)
			learn := startLoad(t, sp, 8, opt)
			time.Sleep(500 * time.Millisecond) // the rule trips after a few timeouts
			learned := learn()
			if learned.errs["timeout"] == 0 {
				t.Fatalf("no call timed out while %s was black-holed: %v %v", bad.g.id, learned.from, learned.errs)
			}

			// Taken out of rotation: only probes reach it, about one per try interval, while
			// the other two answer many calls. Judged by counts, not by a time window: the load
			// runs until the healthy endpoints have answered healthyCalls calls (however long a
			// busy machine takes), and the calls that reached the black hole are counted by the
			// bytes its proxy dropped (a timeout alone does not say which endpoint it was).
			const healthyCalls = 400
			healthy := func() int64 { return eps[0].g.calls.Load() + eps[2].g.calls.Load() }
			h0, dropped0, up0 := healthy(), bad.p.Stats().DroppedUp, eps[0].p.Stats().BytesUp+eps[2].p.Stats().BytesUp
			load := startLoad(t, sp, 8, opt)
			measureStart := time.Now()
			waitFor(t, "the healthy endpoints answer "+fmt.Sprint(healthyCalls)+" calls", func() bool { return healthy()-h0 >= healthyCalls })
			got := load()
			measured := time.Since(measureStart)
			served := healthy() - h0
			reqSize := float64(eps[0].p.Stats().BytesUp+eps[2].p.Stats().BytesUp-up0) / float64(served)
			toBad := float64(bad.p.Stats().DroppedUp-dropped0) / reqSize
			t.Logf("with %s black-holed, in %v: replies %v, errors %v; about %.0f calls went into the black hole", bad.g.id, measured, got.from, got.errs, toBad)
			// Probes: one per try interval, plus calls already on their way when it left. In
			// rotation it would get a third of the calls: about half as many as the others.
			maxProbes := float64(measured/healthTry) + 8 + 3
			if toBad > maxProbes {
				t.Errorf("about %.0f calls went to the black-holed endpoint while the others answered %d in %v, want at most %.0f (probes only)", toBad, served, measured, maxProbes)
			}
			for _, id := range []string{"a", "c"} {
				if got.from[id] == 0 {
					t.Errorf("healthy endpoint %s answered no call", id)
				}
			}
			if n := len(got.errs) - min(got.errs["timeout"], 1); n != 0 {
				t.Errorf("errors other than timeouts: %v", got.errs)
			}

			// Recovery: back in rotation (a probe in flight in the black hole may have to time
			// out first), then soon its share of the calls. How soon is a figure.
			before := bad.g.calls.Load()
			load = startLoad(t, sp, 8, opt)
			if err := bad.p.Pass(); err != nil {
				t.Fatal(err)
			}
			back := waitFor(t, "the recovered endpoint gets calls again", func() bool { return bad.g.calls.Load() > before })
			limit := healthTry + callTimeout + tick + 2*slack
			timingFigure(t, back <= limit, back > 3*limit, "the recovered endpoint got its first call %v after the black hole cleared (target within %v)", back, limit)
			// Its share: in some window where the others answer 60 calls or more, it answers at
			// least a sixth as many (a third is its due; a window may start mid-probe).
			var share, others int64
			waitFor(t, "the recovered endpoint answers its share of the calls", func() bool {
				b0, o0 := bad.g.calls.Load(), healthy()
				for w0 := time.Now(); healthy()-o0 < 60 && time.Since(w0) < time.Second; {
					time.Sleep(5 * time.Millisecond)
				}
				share, others = bad.g.calls.Load()-b0, healthy()-o0
				return share*6 >= others
			})
			after := load()
			t.Logf("recovered after %v; then %d calls there against %d at the others; replies %v, errors %v", back, share, others, after.from, after.errs)
		})
	}
}

// TestHealthRefusedEndpointSkipped starts with one of three endpoints refusing connections: after
// its first failed connect (health.max-connect-fail = 1) calls go to the other two, so almost all
// of many calls succeed.
func TestHealthRefusedEndpointSkipped(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	if err := eps[1].p.Refuse(faultproxy.Closed); err != nil {
		t.Fatal(err)
	}
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.Health.TryInterval = healthTry
		c.Health.MaxConnectFail = 1
	}))
	sp := proxyToEPs(t, comm, eps...)
	ctx := testCtx(t)
	failed := 0
	const calls = 60
	for i := range calls {
		_, err := sayHello(ctx, sp, "x", uint64(i))
		switch {
		case err == nil:
		case errors.Is(err, communicator.ErrConnection):
			failed++
		default:
			t.Fatalf("call %d: err = %v, want nil or ErrConnection", i, err)
		}
	}
	if failed > 2 {
		t.Fatalf("%d of %d calls failed with one endpoint refusing, want at most 2 (before it was taken out)", failed, calls)
	}
}

// TestHealthAllEndpointsDown refuses every endpoint: calls still go to some endpoint and fail
// fast with ErrConnection (TarsCpp picks one even when all are inactive), never all instantly
// with ErrNoEndpoint and never by waiting for their timeout.
func TestHealthAllEndpointsDown(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.Health.TryInterval = healthTry
		c.SyncInvokeTimeout = 2 * time.Second
	}))
	sp := proxyToEPs(t, comm, eps...)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		if err := e.p.Refuse(faultproxy.Reset); err != nil {
			t.Fatal(err)
		}
		e.p.Cut()
	}
	var accepts0 int64
	for _, e := range eps {
		accepts0 += e.p.Stats().Accepts
	}
	for i := range 30 {
		start := time.Now()
		_, err := sayHello(ctx, sp, "down", uint64(i))
		took := time.Since(start)
		if !errors.Is(err, communicator.ErrConnection) {
			t.Fatalf("call %d with every endpoint down: err = %v, want ErrConnection", i, err)
		}
		// ErrConnection, not ErrTimeout (2s), says it did not wait; how fast is a figure.
		within(t, fmt.Sprintf("call %d with every endpoint down", i), took, 300*time.Millisecond)
		time.Sleep(10 * time.Millisecond)
	}
	var accepts int64
	for _, e := range eps {
		accepts += e.p.Stats().Accepts
	}
	if accepts == accepts0 {
		t.Fatal("no endpoint saw a connection attempt: calls with every endpoint down went nowhere")
	}
	// Back up: calls succeed again.
	for _, e := range eps {
		if err := e.p.Pass(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second+healthTry, "a call succeeds once the endpoints are back", func() bool {
		_, err := sayHello(ctx, sp, "back", 1)
		return err == nil
	})
}
