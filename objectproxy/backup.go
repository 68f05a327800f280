package objectproxy

import (
	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Backup routes the two calls of one backup request on this ObjectProxy (the servant's backup
// request logic, in servantproxy, makes them): the first call is routed as any call, and the
// backup, the same request sent again when the first has had no reply by the backup delay, goes
// to another endpoint than the one the first went to. A Backup is a call.Router: it is the Dest of
// both calls. Its methods run on the loop goroutine.
type Backup struct {
	o *ObjectProxy
	// first is the endpoint the first call went to (its AdapterProxy, not its list index: an
	// update of the list between the two calls moves the indices); nil until it is routed.
	first *adapterproxy.AdapterProxy
	sent  bool      // the first call has been routed
	pair  call.Pair // counts the two calls as one
}

// NewBackup returns a Backup for one backup request. Safe for concurrent use (it only allocates).
func (o *ObjectProxy) NewBackup() *Backup { return &Backup{o: o} }

// Pair is what makes the two calls count as one (call.Pair): the backup request logic sets it
// as both calls' Pair, and opens each before it submits it.
func (h *Backup) Pair() *call.Pair { return &h.pair }

// Route implements call.Router: the first call is routed by the servant's balancer, the backup to
// another endpoint (pickOther). A backup with no other endpoint to go to fails at once with
// call.ErrNoEndpoint; its caller is still waiting for the first call.
func (h *Backup) Route(c *call.Call) {
	o := h.o
	if !h.sent {
		h.sent = true
		if o.awaiting {
			o.Route(c) // parked: routed by the first list, as any call
			return
		}
		if i := o.routeOne(c); i >= 0 {
			h.first = o.adapters[i]
		}
		return
	}
	i := o.pickOther(c, o.indexOf(h.first))
	if i < 0 {
		c.Complete(call.ErrNoEndpoint)
		return
	}
	o.send(c, i)
}

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

// Retry implements call.Router, as the ObjectProxy does.
func (h *Backup) Retry(c *call.Call, err error) { h.o.Retry(c, err) }

// pickOther picks the endpoint of a backup request: a healthy active endpoint other than avoid
// (the first request's), the one the balancer's picker chooses for backups (the lowest cost, for
// the load-aware ones) and the next in turn otherwise; -1 when there is no other endpoint. avoid may be -1 (the first call's endpoint
// is unknown): any endpoint will do then.
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
		return o.pickUntried(c)
	}
	i := o.pickUntried(c)
	if i == int(avoid) {
		return -1
	}
	return i
}
