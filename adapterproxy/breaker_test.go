package adapterproxy

import (
	"math"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestBreaker drives the breaker's state machine with outcomes at given times (ms) and checks
// whether the endpoint may be chosen afterwards.
func TestBreaker(t *testing.T) {
	p := DefaultBreaker()
	type ev struct {
		at   int64  // ms
		kind string // ok, err (framework code), half (ok then err), timeout, biz (positive code), pick, over (-9)
		n    int    // repeat
	}
	tests := []struct {
		name      string
		policy    Breaker
		events    []ev
		checkAt   int64 // ms
		wantAllow bool
		wantTrips uint64
	}{
		{name: "healthy", policy: p, events: []ev{{0, "ok", 500}}, checkAt: 1, wantAllow: true},
		{name: "off by default", policy: Breaker{}, events: []ev{{0, "err", 500}}, checkAt: 1, wantAllow: true},
		{name: "few errors among many calls", policy: p, events: []ev{{0, "ok", 9}, {0, "err", 1}, {0, "ok", 9}, {0, "err", 1}, {0, "ok", 200}}, checkAt: 1, wantAllow: true},
		{name: "service codes are not errors", policy: p, events: []ev{{0, "biz", 500}}, checkAt: 1, wantAllow: true},
		{name: "half failing trips", policy: p, events: []ev{{0, "half", 30}}, checkAt: 50, wantAllow: false, wantTrips: 1},
		{name: "timeouts trip", policy: p, events: []ev{{0, "timeout", 20}}, checkAt: 50, wantAllow: false, wantTrips: 1},
		{name: "isolation ends", policy: p, events: []ev{{0, "err", 20}}, checkAt: 100, wantAllow: true, wantTrips: 1},
		{name: "one probe at a time", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}}, checkAt: 101, wantAllow: false, wantTrips: 1},
		{name: "probe success revives", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}, {101, "ok", 1}}, checkAt: 102, wantAllow: true, wantTrips: 1},
		{name: "revived endpoint on probation", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}, {101, "ok", 1}, {102, "err", 2}}, checkAt: 103, wantAllow: false, wantTrips: 2},
		{name: "revived endpoint recovers", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}, {101, "ok", 1}, {102, "ok", 100}, {103, "err", 2}}, checkAt: 104, wantAllow: true, wantTrips: 1},
		{name: "probe failure isolates for longer", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}, {101, "err", 1}}, checkAt: 250, wantAllow: false, wantTrips: 2},
		{name: "doubled isolation ends", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}, {101, "err", 1}}, checkAt: 301, wantAllow: true, wantTrips: 2},
		{name: "unanswered probe lets another go", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}}, checkAt: 1100, wantAllow: true, wantTrips: 1},
		{name: "a call sent before the trip does not decide the probe", policy: p, events: []ev{{0, "err", 20}, {100, "pick", 1}, {101, "stale", 1}, {102, "ok", 1}}, checkAt: 103, wantAllow: true, wantTrips: 1},
		{name: "overload backs off", policy: Breaker{}, events: []ev{{0, "over", 1}}, checkAt: 5, wantAllow: false},
		{name: "overload backoff ends", policy: Breaker{}, events: []ev{{0, "over", 1}}, checkAt: 10, wantAllow: true},
		{name: "repeated overload backs off longer", policy: Breaker{}, events: []ev{{0, "over", 3}}, checkAt: 35, wantAllow: false},
		{name: "overload is not a breaker error", policy: p, events: []ev{{0, "over", 100}}, checkAt: 2000, wantAllow: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g guard
			pol := tt.policy
			for _, e := range tt.events {
				now := e.at * ms
				for range max(e.n, 1) {
					id := g.probeID // an outcome after a pick is the probe's ("stale": another call's)
					switch e.kind {
					case "ok":
						g.replied(&pol, now, 0, id)
					case "biz":
						g.replied(&pol, now, 7, id)
					case "err":
						g.replied(&pol, now, codec.RetServerDecode, id)
					case "stale":
						g.replied(&pol, now, codec.RetServerDecode, id+1)
					case "half":
						g.replied(&pol, now, 0, id)
						g.replied(&pol, now, codec.RetServerDecode, id)
					case "over":
						g.replied(&pol, now, codec.RetOverload, id)
					case "timeout":
						g.failed(&pol, now, timeoutCost, id)
					case "pick":
						g.picked(now, 7)
					}
				}
			}
			if got := g.allow(tt.checkAt * ms); got != tt.wantAllow {
				t.Errorf("allow(%dms) = %v, want %v (%+v)", tt.checkAt, got, tt.wantAllow, g)
			}
			if g.trips != tt.wantTrips {
				t.Errorf("trips = %d, want %d", g.trips, tt.wantTrips)
			}
		})
	}
}

// TestBreakerIsolationCapped checks that repeated trips double the isolation up to MaxIsolation.
func TestBreakerIsolationCapped(t *testing.T) {
	p := DefaultBreaker()
	p.MaxIsolation = 400 * time.Millisecond
	var g guard
	now := int64(0)
	for range 20 {
		g.failed(&p, now, errorCost, 1)
	}
	want := []int64{100, 200, 400, 400}
	for i, w := range want {
		if got := g.isolation / ms; got != w {
			t.Fatalf("isolation #%d = %dms, want %dms", i+1, got, w)
		}
		now = g.until
		g.picked(now, 2)
		g.failed(&p, now+ms, errorCost, 2) // the probe fails
	}
}

func TestPeakEWMA(t *testing.T) {
	var l latency
	l.observe(0, 10*ms)
	if got := l.value(0); got != float64(10*ms) {
		t.Fatalf("first sample: %v", got)
	}
	l.observe(ms, 50*ms) // a peak replaces at once
	if got := l.value(ms); got != float64(50*ms) {
		t.Fatalf("peak: %v, want 50ms", got)
	}
	l.observe(2*ms, ms) // a fast sample right after moves it little
	if got := l.value(2 * ms); got < float64(49*ms) {
		t.Fatalf("a fast sample 1ms after the peak brought it to %v", time.Duration(got))
	}
	// Without samples it decays by e every decayTime.
	at := 2*ms + int64(decayTime)
	want := l.value(2*ms) / math.E
	if got := l.value(at); math.Abs(got-want) > want*1e-9 {
		t.Fatalf("decayed to %v, want %v", got, want)
	}
	// Samples spread over time pull it down to the new level.
	now := at
	for range 100 {
		now += 100 * ms
		l.observe(now, ms)
	}
	if got := l.value(now); got > float64(2*ms) {
		t.Fatalf("after 10s of 1ms replies: %v", time.Duration(got))
	}
}
