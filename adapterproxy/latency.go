package adapterproxy

import (
	"math"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// decayTime is the time constant of the peak-EWMA latency: a sample's weight falls by e every
// decayTime, and an endpoint that gets no call sees its latency decay toward 0 at that rate, so
// that a slow endpoint the balancer has stopped choosing is tried again after a while (about
// decayTime * ln(its latency / the others' cost)) and can show it has recovered.
const decayTime = 500 * time.Millisecond

// latency is an endpoint's peak-EWMA reply latency (Finagle's PeakEwma): the value decays toward
// 0 while no sample comes (value); a sample above the decayed value replaces it at once, one below
// it is blended in with a weight that grows with the sample's own duration (the time the reply
// was watched for). Slowness shows at the first slow reply; speed has to be proven over time, and
// a reply faster than the value never raises it. Owned by the loop goroutine.
type latency struct {
	ewma float64 // nanoseconds
	last int64   // call.Now of the last update
}

// value returns the latency at now, decayed since the last sample.
func (l *latency) value(now int64) float64 {
	if l.ewma == 0 || now <= l.last {
		return l.ewma
	}
	return l.ewma * math.Exp(-float64(now-l.last)/float64(decayTime))
}

// observe records a reply that took rtt nanoseconds.
func (l *latency) observe(now, rtt int64) {
	if rtt < 0 {
		rtt = 0
	}
	s, cur := float64(rtt), l.value(now)
	if s >= cur {
		l.ewma = s
	} else {
		w := math.Exp(-s / float64(decayTime))
		l.ewma = cur*w + s*(1-w)
	}
	l.last = now
}

// Load returns the endpoint's load as the latency-aware balancers see it: its peak-EWMA reply
// latency in nanoseconds (0 before the first reply) decayed to now, and the two-way calls in
// flight on it (sent or queued, not answered). Must be called on the loop goroutine.
func (a *AdapterProxy) Load(now int64) (latency float64, inflight int) {
	return a.lat.value(now), a.calls.len()
}

// replied is the reply hook: it feeds the latency of c (answered with return code ret) to the
// peak EWMA and its outcome to the breaker and the overload backoff. A reply with a framework
// error (ret < 0: no such servant or function, overload, a server that failed to decode or
// encode) counts as slow as the call's whole timeout: an endpoint that fails every call at once
// must not look the fastest to the latency-aware balancers (p2c, least-inflight's ties). A call
// that waited for its connection counts from the connect: the dial is not the server's latency,
// and it made an endpoint just listed look slowest of all. The adapter's own pings count for the
// TARS health rules only.
func (a *AdapterProxy) replied(c *call.Call, ret int32) {
	if a.isPing(c) {
		return
	}
	now := a.loop.Now()
	rtt := now - max(c.SentAt, a.openedAt) // its time here (not on an endpoint it was retried from), since the connect
	if ret < 0 && c.Deadline > c.SentAt {
		rtt = max(rtt, c.Deadline-c.SentAt)
	}
	a.lat.observe(now, rtt)
	a.guard.replied(&a.opts.Breaker, now, ret, c.ID)
}

// timedOut is the hook of a call that expired waiting for its reply: its time counts as a
// latency sample (at least the deadline: the endpoint is at least that slow) and as a failure.
func (a *AdapterProxy) timedOut(c *call.Call) {
	if a.isPing(c) {
		return
	}
	now := a.loop.Now()
	a.lat.observe(now, now-c.SentAt)
	a.guard.failed(&a.opts.Breaker, now, timeoutCost, c.ID)
}
