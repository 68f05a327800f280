package objectproxy

import (
	"sync/atomic"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Backup routes the two calls of one backup request on this ObjectProxy (the servant's backup
// request logic, in servantproxy, makes them): the first call is routed as any call, and the
// backup, the same request sent again when the first has had no reply by the backup delay, goes
// to another healthy endpoint than the one the first is on. A Backup is a call.Router: it is the
// Dest of both calls. Its methods run on the loop goroutine.
type Backup struct {
	o *ObjectProxy
	// firstCall is the first call: the first one routed through the Backup (the backup is made
	// while it is pending, so the two are never the same Call).
	firstCall *call.Call
	// first is the endpoint the first call was last sent to (its first AdapterProxy, not its list
	// index: an update of the list between the two calls moves the indices), which a retry of
	// the first call changes; nil until it is sent.
	first *adapterproxy.AdapterProxy
	// Sent, when set, is told on the loop whether the backup was sent to an endpoint, or ended
	// unsent (no other healthy endpoint, or the first call still waits for the endpoint list).
	Sent func(sent bool)
	sent atomic.Bool // the backup was sent to an endpoint (WasSent)
	pair call.Pair   // counts the two calls as one
}

// NewBackup returns a Backup for one backup request. Safe for concurrent use (it only allocates).
func (o *ObjectProxy) NewBackup() *Backup { return &Backup{o: o} }

// Pair is what makes the two calls count as one (call.Pair): the backup request logic sets it
// as both calls' Pair, and opens each before it submits it.
func (h *Backup) Pair() *call.Pair { return &h.pair }

// Route implements call.Router: the first call is routed by the servant's balancer (parked, if
// the servant waits for its first list: Install routes it here again), the backup to another
// healthy endpoint (pickOther). A backup with no such endpoint to go to, or made while the first
// call waits for the list, fails at once (call.Pair.Unsent): with call.ErrNoEndpoint while the
// first call is pending (its caller goes on waiting for it), and with the first call's error if
// that one has failed already (the loop met the backup late, after the first call's expiry, say):
// the pair's outcome is then the first call's failure, not the backup's want of an endpoint.
func (h *Backup) Route(c *call.Call) {
	o := h.o
	if h.firstCall == nil {
		h.firstCall = c
	}
	if c == h.firstCall {
		if o.awaiting {
			o.park(c)
			return
		}
		if i := o.routeOne(c); i >= 0 {
			h.first = o.adapters[i]
		}
		return
	}
	i := -1
	if !o.awaiting {
		i = o.pickOther(c, o.indexOf(h.first))
	}
	if i >= 0 {
		h.sent.Store(true)
	}
	if h.Sent != nil {
		h.Sent(i >= 0)
	}
	if i < 0 {
		c.Complete(h.pair.Unsent())
		return
	}
	o.send(c, i)
}

// WasSent reports whether the backup has been sent to an endpoint: false while it waits for its
// net thread, and for good when Route found no endpoint for it or it was dropped before its turn
// (its first call answered). Safe for concurrent use.
func (h *Backup) WasSent() bool { return h.sent.Load() }

// indexOf returns a's index in the current list, or -1 if a is nil or no longer listed.
func (o *ObjectProxy) indexOf(a *adapterproxy.AdapterProxy) int32 {
	if a == nil {
		return -1
	}
	for i, b := range o.adapters {
		if b == a {
			return int32(i)
		}
	}
	return -1
}

// Retry implements call.Router, as the ObjectProxy does; a retry of the first call moves it to
// another endpoint, which its backup then avoids.
func (h *Backup) Retry(c *call.Call, err error) {
	first := c == h.firstCall
	if i := h.o.retry(c, err); first && i >= 0 {
		h.first = h.o.adapters[i]
	}
}

// pickOther picks the endpoint of a backup request: a healthy active endpoint other than avoid
// (the first request's), the one the balancer's picker chooses for backups (the lowest cost, for
// the load-aware ones) and the next in turn otherwise; -1 when there is none. A backup never
// goes to an endpoint the health rules or the circuit breaker keep out: its reply, an error
// most likely, would be the call's. avoid may be -1 (the first call's endpoint is unknown): any
// healthy endpoint will do then.
func (o *ObjectProxy) pickOther(c *call.Call, avoid int32) int {
	n := len(o.adapters)
	if avoid >= 0 {
		o.markTried(c, avoid)
	}
	if n == 0 || (n == 1 && avoid == 0) {
		return -1
	}
	if b := o.pickers.backup; b != nil {
		o.view.now = o.loop.Now()
		if i := b.pickOther(&o.view, avoid); i >= 0 {
			return i
		}
	}
	i := o.pickUntriedHealthy(c)
	if i == int(avoid) {
		return -1
	}
	return i
}
