package adapterproxy

import (
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// Breaker is the policy of an endpoint's circuit breaker, in the manner of brpc's: the cost of
// the calls' errors is averaged (an exponential moving average, EMA) over a short and a long
// window of calls; when either average passes its ratio the endpoint is isolated, for an
// isolation that doubles each time it trips again soon after its last revival, and it is revived
// by a probe: once the isolation ends, one call is let through, and its outcome closes the
// breaker or isolates the endpoint again. A zero ShortWindow turns the breaker off (the default).
//
// A success costs 0, an error 1 and a timeout timeoutCost; errors are calls that timed out, lost
// their connection while waiting, or got a reply with a negative (framework) return code other
// than -9. Positive return codes are the service's own answers and cost nothing.
//
// # The breaker and the TARS health rules
//
// Both watch the same calls of the same (endpoint, net thread) and either can take the endpoint
// out of rotation; it is chosen again only when both let it.
//
//   - The health rules (Health) are TARS's, kept as TarsCpp has them: they count timeouts and
//     failed connects only (any reply, even a framework error, proves the endpoint alive), take
//     an endpoint out after a streak of failures or a share of timeouts over a window of seconds,
//     and probe it every TryInterval with a ping. They decide about endpoints that are down or
//     not answering, and they are always on.
//   - The breaker is opt-in (per servant, circuit-breaker = true). It also counts framework
//     errors in replies, reacts within tens of calls rather than within a time window, and isolates
//     a repeat offender for longer each time (up to MaxIsolation); its probe is a real call, so it
//     decides about endpoints that answer but answer badly.
//
// A -9 (overload) reply is neither: it backs the endpoint off for a short, growing time (10ms
// doubling up to 1s while -9s follow each other) without touching either, since an overloaded
// server is healthy and asks only for less traffic.
type Breaker struct {
	ShortWindow  int           // calls in the short EMA window; 0: no breaker
	ShortRatio   float64       // the short window's average error cost that trips the breaker
	LongWindow   int           // calls in the long EMA window
	LongRatio    float64       // the long window's average error cost that trips the breaker
	MinIsolation time.Duration // the first isolation
	MaxIsolation time.Duration // the longest isolation after repeated trips
}

// DefaultBreaker is the breaker circuit-breaker = true turns on: brpc's ratios (10% over a short
// window, 5% over a long one) over windows sized for one net thread's share of a servant's calls.
func DefaultBreaker() Breaker {
	return Breaker{
		ShortWindow: 100, ShortRatio: 0.1,
		LongWindow: 1000, LongRatio: 0.05,
		MinIsolation: 100 * time.Millisecond, MaxIsolation: 30 * time.Second,
	}
}

// Costs of a failed call in the error EMAs.
const (
	errorCost   = 1.0
	timeoutCost = 2.0 // a timeout held a caller for its whole deadline
)

// Overload backoff after -9 replies.
const (
	overloadMin = 10 * time.Millisecond
	overloadMax = time.Second
)

// probeWait is how long a probe may stay unanswered before another call may probe (the first
// one ended without an outcome the breaker sees, e.g. its caller gave up).
const probeWait = time.Second

// guard is one endpoint's breaker and overload backoff. Owned by the loop goroutine.
type guard struct {
	short, long float64 // error cost EMAs
	calls       int     // outcomes recorded since the breaker last closed
	open        bool    // isolated, or half-open waiting for its probe's outcome
	until       int64   // isolated until then
	probing     bool    // half-open: the probe is out
	probeID     int32   // the probe's request id: only its outcome closes or trips the breaker
	probeEnd    int64   // another probe may go after this
	isolation   int64   // the last isolation's length
	closedAt    int64   // when the breaker last closed after a trip
	trips       uint64

	overUntil  int64 // no call before this after a -9
	overStreak int   // consecutive -9 replies
	overloads  uint64
}

// allow reports whether the balancer may choose the endpoint now.
func (g *guard) allow(now int64) bool {
	if now < g.overUntil {
		return false
	}
	if !g.open {
		return true
	}
	return now >= g.until && (!g.probing || now >= g.probeEnd)
}

// picked records that the call with request id was sent; a half-open breaker's call is its
// probe. (The adapter's own pings are not picked: they would take the probe's place, and their
// outcome is the health rules', not the breaker's.)
func (g *guard) picked(now int64, id int32) {
	if g.open && now >= g.until && (!g.probing || now >= g.probeEnd) {
		g.probing, g.probeID, g.probeEnd = true, id, now+int64(probeWait)
	}
}

// isProbe reports whether the outcome of the call with request id decides a half-open breaker:
// the outcomes of calls sent before it tripped (still arriving) decide nothing.
func (g *guard) isProbe(id int32) bool { return g.probing && id == g.probeID }

// replied records the reply, with return code ret, of the call with request id.
func (g *guard) replied(p *Breaker, now int64, ret int32, id int32) {
	if ret == codec.RetOverload {
		g.overStreak++
		g.overloads++
		d := overloadMin << min(g.overStreak-1, 10)
		g.overUntil = now + int64(min(d, overloadMax))
		return
	}
	g.overStreak = 0
	if ret < 0 {
		g.failed(p, now, errorCost, id)
		return
	}
	if p.ShortWindow <= 0 {
		return
	}
	if g.open {
		if g.isProbe(id) {
			g.close(p, now) // the probe succeeded
		}
		return
	}
	g.record(p, 0)
}

// failed records the failure, of the given cost, of the call with request id.
func (g *guard) failed(p *Breaker, now int64, cost float64, id int32) {
	if p.ShortWindow <= 0 {
		return
	}
	if g.open {
		if g.isProbe(id) {
			g.trip(p, now) // the probe failed: isolate again, for longer
		}
		return
	}
	g.record(p, cost)
	if g.calls >= minCalls(p) && (g.short > p.ShortRatio || (p.LongWindow > 0 && g.long > p.LongRatio)) {
		g.trip(p, now)
	}
}

func (g *guard) record(p *Breaker, cost float64) {
	g.short += (cost - g.short) / float64(p.ShortWindow)
	if p.LongWindow > 0 {
		g.long += (cost - g.long) / float64(p.LongWindow)
	}
	g.calls++
}

// trip isolates the endpoint: for MinIsolation, or twice the last isolation if the breaker trips
// again within ten isolations of its last revival.
func (g *guard) trip(p *Breaker, now int64) {
	iso := int64(p.MinIsolation)
	if iso <= 0 {
		iso = int64(100 * time.Millisecond)
	}
	if g.isolation > 0 && (g.probing || now-g.closedAt < 10*g.isolation) {
		iso = max(iso, min(2*g.isolation, int64(max(p.MaxIsolation, p.MinIsolation))))
	}
	g.isolation = iso
	g.open, g.probing, g.until = true, false, now+iso
	g.short, g.long, g.calls = 0, 0, 0
	g.trips++
}

// close revives the endpoint after a successful probe. It is on probation: its averages restart
// just under the ratios and its verdicts at once, so that the next couple of errors isolate it
// again (for twice as long) instead of the tens of calls a fresh window needs.
func (g *guard) close(p *Breaker, now int64) {
	g.open, g.probing = false, false
	g.closedAt = now
	g.short, g.long = 0.9*p.ShortRatio, 0.9*p.LongRatio
	g.calls = minCalls(p)
}

// minCalls is how many outcomes a fresh window needs before it can trip the breaker.
func minCalls(p *Breaker) int { return min(max(p.ShortWindow/5, 1), 20) }

// BreakerStats describes an endpoint's breaker and overload backoff on this net thread.
type BreakerStats struct {
	Open      bool    // isolated or half-open
	Trips     uint64  // times the breaker isolated the endpoint
	Short     float64 // the short window's average error cost
	Long      float64 // the long window's
	Overloads uint64  // -9 replies, each of which backed the endpoint off
}

// BreakerStats returns the breaker's state. Must be called on the loop goroutine.
func (a *AdapterProxy) BreakerStats() BreakerStats {
	g := &a.guard
	return BreakerStats{Open: g.open, Trips: g.trips, Short: g.short, Long: g.long, Overloads: g.overloads}
}

// SetBreaker replaces the breaker policy. It must be called before the AdapterProxy is used, by
// whoever built it (the ObjectProxy, with its servant's policy).
func (a *AdapterProxy) SetBreaker(p Breaker) { a.opts.Breaker = p }
