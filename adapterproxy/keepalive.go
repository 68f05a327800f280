package adapterproxy

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Probing an inactive endpoint: the AdapterProxy itself connects (if it has no connection) and
// sends tars_ping, answered within probeTimeout or counted as failed. A reply makes the endpoint
// active again, so an endpoint down for a moment is back in rotation within about probeInterval,
// without waiting for a user call to be risked on it (TarsCpp lets one user call through every
// try-interval, which TryInterval still does too). The probes of an endpoint that stays down
// past probeGrace back off: each waits twice the one before, up to try-interval, less up to a
// quarter at random (endpoints that went down together do not dial together), so that thousands
// of dead endpoints cost one dial each per try-interval, not four a second forever, while one
// down for a second or two is back within about probeInterval of its recovery.
const (
	probeInterval = 250 * time.Millisecond
	probeTimeout  = 500 * time.Millisecond
	probeGrace    = 2 * time.Second
)

// nextProbe schedules the next probe of the inactive endpoint from now: probeInterval during
// probeGrace from its first probe, then twice as far as the last (the backoff above).
func (a *AdapterProxy) nextProbe(now int64) {
	every := int64(probeInterval)
	if a.probeEvery == 0 {
		a.probeSince = now
	} else if now-a.probeSince >= int64(probeGrace) {
		every = min(max(2*a.probeEvery, every), max(a.health.tryInterval(), every))
	}
	a.probeEvery = every
	a.probeAt = now + every - rand.Int64N(every/4+1)
}

// Tick runs the connection's periodic chores: dropping queued calls whose callers gave up,
// making a pending table small again after a burst, giving up on a connect that never
// completed, probing an inactive endpoint, a keepalive ping when the connection has made no
// progress for the keepalive interval, or, without keepalive, closing a connection idle for
// longer than the endpoint's -t timeout. The net thread calls it at its chores (every 100 ms, or
// a quarter of the keepalive interval when that is shorter). Must
// be called on the loop goroutine.
func (a *AdapterProxy) Tick(now int64) {
	a.sweepAbandoned()
	a.calls.trim()
	if len(a.drains) > 0 {
		a.tickDrains(now)
	}
	switch a.state {
	case stateConnecting:
		if limit := int64(a.ConnectTimeout() + connectSlack); now-a.dialStart > limit {
			a.DialFailed(a.dialGen, fmt.Errorf("connect did not complete within %v", time.Duration(limit)))
		}
		return
	}
	if a.retired {
		return // finishing its calls (Retire): no probe, no keepalive, no idle close
	}
	if !a.health.inactive {
		a.probeEvery = 0 // the next time it is out, probes start again at probeInterval
	}
	switch a.state {
	case stateIdle:
		if a.health.inactive && now >= a.probeAt && now >= a.retryAt {
			a.nextProbe(now)
			a.dial(now) // Opened sends the probe ping
		}
		return
	}
	if a.opts.Short && a.closeIfDone() {
		return
	}
	if a.health.inactive && a.ping == nil && now >= a.probeAt {
		a.nextProbe(now)
		a.sendPing(now, int64(probeTimeout))
		a.pingProbe = true
		return
	}
	idle := now - a.lastIO
	if ka := int64(a.opts.KeepAlive); ka > 0 && !a.udp { // no keepalive on udp (udp.go)
		a.sample(now) // progress is the keepalive's alone: without it, no syscall per tick
		// A ping is due when the connection made no progress for the interval: nothing read,
		// no waiting bytes taken. Writes the socket takes at once are no progress (the kernel
		// takes them whether or not anyone is there): calls written every few milliseconds to
		// a black-holed connection must not keep its ping from going.
		if a.ping == nil && now-a.lastMoved >= ka {
			a.sendPing(now, ka)
		}
		return
	}
	if t := int64(a.ep.Timeout); t > 0 && idle >= t && a.ownCalls() == 0 && a.q.live == 0 && !a.sending(now, t) {
		a.detach(errIdle)
	}
}

// sendPing sends tars_ping with a deadline of timeout; its reply (or its expiry) is handled
// like any call's, and nobody waits for it.
func (a *AdapterProxy) sendPing(now, timeout int64) {
	c := call.Get()
	c.Deadline = now + timeout
	c.Notify = recycle
	c.Dest = noRetry{}
	c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{
		Version:     codec.VersionTars,
		PacketType:  codec.PacketNormal,
		RequestID:   codec.RequestIDUnassigned, // send gives it its id (pending.go)
		ServantName: a.servant,
		FuncName:    "tars_ping",
		Timeout:     int32(timeout / 1e6),
	})
	// Only a ping that was queued is tracked: a refused one is already recycled.
	if a.send(c) {
		a.ping, a.pingID, a.pingProbe, a.pingSent = c, c.ID, false, now
	}
}

// recycle is the completion of calls nobody waits for.
func recycle(c *call.Call) { call.Put(c) }

// noRetry routes the adapter's own calls (pings): they are never retried elsewhere.
type noRetry struct{}

func (noRetry) Route(c *call.Call)            { c.Complete(call.ErrNoEndpoint) }
func (noRetry) Retry(c *call.Call, err error) { c.Complete(err) }
