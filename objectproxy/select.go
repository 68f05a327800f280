package objectproxy

import (
	"math/bits"
	"slices"

	"github.com/tarscomm/tarscomm/internal/call"

	"github.com/tarscomm/tarscomm/endpoint"
)

// View is what a Picker picks from: a servant's endpoint list on one net thread, in TarsCpp
// order (index i is endpoint i of the list), with the endpoints' health as the ObjectProxy
// sees it. It is built when the list changes; only the healthy subset (Up) is refreshed between
// changes (on the thread's chores, or when a pick meets an endpoint that went unhealthy). Its
// methods run on the loop goroutine.
type View struct {
	o   *ObjectProxy
	now int64 // the clock of the pick under way

	active []int32 // indices of the endpoints in the registry's active list, in list order (the List's: read only)
	up     []int32 // the active ones that were healthy at the last refresh
	upSnap []bool  // upSnap[k]: whether active[k] was healthy at the last refresh
	stale  bool    // up must be refreshed before use
	rr     uint32  // the turn: round-robin position, pre-incremented as in TarsCpp

	scratch []int32 // the hash pickers' degraded loop
	skip    uint64  // endpoints (i%64) Ok reads as unhealthy: a hashed retry's tried set
}

// Len returns the number of endpoints in the list, active and inactive.
func (v *View) Len() int { return len(v.o.adapters) }

// Endpoint returns endpoint i of the list.
func (v *View) Endpoint(i int32) endpoint.Endpoint { return v.o.list.at(i) }

// Listed reports whether endpoint i is in the registry's active list (not only registered).
func (v *View) Listed(i int32) bool { return v.o.list.inReg[i] }

// Static reports whether every active endpoint says -v 1: TarsCpp's static weighting.
func (v *View) Static() bool { return v.o.list.static }

// Active returns the indices of the registry's active endpoints, in list order. Read only.
func (v *View) Active() []int32 { return v.active }

// Up returns the active endpoints that are healthy, as of the last refresh (refreshing first
// if a health change was noticed). Read only; an entry may have gone unhealthy since: check
// the one picked with Ok.
func (v *View) Up() []int32 {
	if v.stale {
		v.refresh()
	}
	return v.up
}

// Ok reports whether endpoint i is healthy now: the health rules have not taken it out (or a
// probe is due) and no reconnect backoff is running.
func (v *View) Ok(i int32) bool {
	if v.skip != 0 && v.skip&(1<<(uint32(i)%64)) != 0 {
		return false
	}
	if v.o.pools != nil {
		return v.o.pools[v.o.ensure(i)].ok(v.now)
	}
	return v.o.at(i).Active(v.now)
}

// Noticed tells the view that an endpoint of Up was found unhealthy: Up is refreshed on its
// next use.
func (v *View) Noticed() { v.stale = true }

// Load returns endpoint i's peak-EWMA reply latency (nanoseconds) and its calls in flight (over
// its connections: the mean latency of those that have one, and the sum of the calls).
func (v *View) Load(i int32) (latency float64, inflight int) {
	if v.o.pools != nil {
		return v.o.pools[v.o.ensure(i)].load(v.now)
	}
	return v.o.at(i).Load(v.now)
}

// Inflight returns endpoint i's calls in flight (over all its connections).
func (v *View) Inflight(i int32) int {
	if v.o.pools != nil {
		return v.o.poolPending(i)
	}
	return v.o.at(i).Pending()
}

// AnyOne is the pick when no endpoint is healthy: calls still go to one, in turn (that is how a
// blocked endpoint gets its retry), among the active ones if there are any.
func (v *View) AnyOne() int {
	v.rr++
	if n := uint32(len(v.active)); n > 0 {
		return int(v.active[v.rr%n])
	}
	return int(v.rr % uint32(len(v.o.adapters)))
}

// chooser is a picker that chooses among the healthy active endpoints only (fromUp runs it).
type chooser interface {
	choose(v *View, up []int32) int32
}

// fromUp is the pick of a chooser: it chooses among Up (len(up) > 0); if the one chosen went
// unhealthy since the last refresh it refreshes once and chooses again; with no healthy endpoint
// it is AnyOne.
func (v *View) fromUp(c chooser) int {
	for range 2 {
		up := v.Up()
		if len(up) == 0 {
			break
		}
		if i := c.choose(v, up); v.Ok(i) {
			return int(i)
		}
		v.stale = true
	}
	return v.AnyOne()
}

// build prepares the view for o's new list.
func (v *View) build() {
	v.active = v.o.cur.active
	v.upSnap = slices.Grow(v.upSnap[:0], len(v.active))[:len(v.active)]
	v.stale = true
}

// refresh rebuilds up from the endpoints' current health.
func (v *View) refresh() {
	v.up = v.up[:0]
	for k, i := range v.active {
		ok := v.Ok(i)
		v.upSnap[k] = ok
		if ok {
			v.up = append(v.up, i)
		}
	}
	v.stale = false
}

// checkHealth marks up stale if some endpoint's health changed since the last refresh. It runs
// on the thread's chores, not per pick.
func (v *View) checkHealth(now int64) {
	if v.stale {
		return
	}
	v.now = now
	for k, i := range v.active {
		if v.Ok(i) != v.upSnap[k] {
			v.stale = true
			return
		}
	}
}

// pick returns the list index for c, or -1 if the list has no active endpoint (it is empty, or
// holds only endpoints the registry lists as inactive, which take no calls, as in TarsCpp).
func (o *ObjectProxy) pick(c *call.Call) int {
	if len(o.cur.active) == 0 {
		return -1
	}
	if len(o.adapters) == 1 {
		return 0
	}
	v := &o.view
	v.now = o.loop.Now()
	p := &o.pickers
	switch {
	case c.Hashed:
		return p.hash.Pick(v, c.Hash)
	case o.list.static:
		return p.static.Pick(v, 0)
	case p.up != nil:
		return v.fromUp(p.up) // what p.spread.Pick does, one call fewer
	}
	return p.spread.Pick(v, 0)
}

// markTried records that c was sent to endpoint i of the current list. The record is a 64-bit
// set of i%64: with more than 64 endpoints an untried one may read as tried, so that a retry or
// a backup passes it over, but one that was tried never reads as untried: a call never goes back
// to an endpoint it tried while others are left.
func (o *ObjectProxy) markTried(c *call.Call, i int32) {
	c.Tried = o.tried(c) | 1<<(uint32(i)%64)
	c.TriedIn = o.cur
}

// tried returns the set of endpoints c was sent to (markTried), numbered as in the current
// list. A list installed since c's last send numbers its endpoints anew (those that joined or
// left move the others): the set is carried over to it by the endpoints' keys, once.
func (o *ObjectProxy) tried(c *call.Call) uint64 {
	if c.Tried == 0 {
		return 0
	}
	if l, _ := c.TriedIn.(*List); l != nil && l != o.cur {
		c.Tried, c.TriedIn = carry(c.Tried, l, o.cur), o.cur
	}
	return c.Tried
}

// carry returns tried set t of list from as a set of list to: each endpoint of from that t may
// hold (i%64) and that to lists too.
func carry(t uint64, from, to *List) uint64 {
	var out uint64
	for ; t != 0; t &= t - 1 {
		for i := bits.TrailingZeros64(t); i < len(from.spans); i += 64 {
			if j, ok := to.find(from.key(i), 0); ok {
				out |= 1 << (uint(j) % 64)
			}
		}
	}
	return out
}

// pickUntried picks a healthy active endpoint c has not tried, then any active endpoint it has
// not tried; -1 if it has tried them all (an inactive endpoint takes no calls, retries neither).
func (o *ObjectProxy) pickUntried(c *call.Call) int {
	if i := o.pickUntriedHealthy(c); i >= 0 {
		return i
	}
	t := o.tried(c)
	for _, i := range o.view.active {
		if t&(1<<(uint32(i)%64)) == 0 {
			return int(i)
		}
	}
	return -1
}

// pickUntriedHashed picks where c's hash code goes when the endpoints it tried are down: the
// hash picker's own fallback (TarsCpp's rehash, the ketama ring's next point), where the next
// calls with the code go while the endpoint it failed on stays unhealthy; -1 if that is no
// healthy untried endpoint.
func (o *ObjectProxy) pickUntriedHashed(c *call.Call) int {
	v := &o.view
	v.now = o.loop.Now()
	t := o.tried(c)
	v.skip = t
	i := o.pickers.hash.Pick(v, c.Hash)
	v.skip = 0
	if i < 0 || t&(1<<(uint32(i)%64)) != 0 || !v.Ok(int32(i)) {
		return -1
	}
	return i
}

// pickUntriedHealthy picks a healthy active endpoint c has not tried, the next in turn; -1 if
// there is none.
func (o *ObjectProxy) pickUntriedHealthy(c *call.Call) int {
	v := &o.view
	v.now = o.loop.Now()
	t := o.tried(c)
	tried := func(i int32) bool { return t&(1<<(uint32(i)%64)) != 0 }
	up := v.Up()
	if n := uint32(len(up)); n > 0 {
		for k := range n {
			i := up[(v.rr+1+k)%n]
			if !tried(i) && v.Ok(i) {
				v.rr += k + 1
				return int(i)
			}
		}
	}
	return -1
}
