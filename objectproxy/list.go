package objectproxy

import (
	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
)

// endpoints is a servant's list as the ObjectProxy keeps it: active and inactive endpoints
// together, in TarsCpp order, each marked with where it came from.
type endpoints struct {
	eps    []endpoint.Endpoint
	inReg  []bool // eps[i] was in the active list
	static bool   // every endpoint says -v 1: TarsCpp's static weighting
}

// addrKey identifies an endpoint's connection: TarsCpp's cmpDesc fields.
type addrKey struct {
	proto endpoint.Protocol
	host  string
	port  int
}

func keyOf(e endpoint.Endpoint) addrKey { return addrKey{e.Proto, e.Host, e.Port} }

// buildList merges active and inactive (an endpoint in both counts as active; repeats count
// once), drops endpoints of weight 0 under static weighting as TarsCpp does, and sorts the
// result in TarsCpp order.
func buildList(active, inactive []endpoint.Endpoint) endpoints {
	var l endpoints
	n := len(active) + len(inactive)
	if n == 0 {
		return l
	}
	static := true
	for _, e := range active {
		static = static && e.WeightType == endpoint.WeightStatic
	}
	for _, e := range inactive {
		static = static && e.WeightType == endpoint.WeightStatic
	}
	seen := make(map[addrKey]bool, n)
	all := make([]endpoint.Endpoint, 0, n)
	act := make(map[addrKey]bool, len(active))
	for k, list := range [][]endpoint.Endpoint{active, inactive} {
		for _, e := range list {
			if static && weightOf(e) <= 0 {
				continue
			}
			key := keyOf(e)
			if seen[key] {
				continue
			}
			seen[key] = true
			act[key] = k == 0
			all = append(all, e)
		}
	}
	endpoint.SortTars(all)
	l.eps, l.static = all, static
	l.inReg = make([]bool, len(all))
	for i, e := range all {
		l.inReg[i] = act[keyOf(e)]
	}
	return l
}

func (l *endpoints) equal(m *endpoints) bool {
	if len(l.eps) != len(m.eps) || l.static != m.static {
		return false
	}
	for i := range l.eps {
		if l.eps[i] != m.eps[i] || l.inReg[i] != m.inReg[i] {
			return false
		}
	}
	return true
}

// List is a servant's endpoint list prepared for Install: merged, filtered and sorted in TarsCpp
// order once, off the loops, and then shared, read-only, by the ObjectProxies of every net
// thread. Building it is the costly part of an update (sorting thousands of endpoints); a net
// thread only diffs it against the endpoints it has.
type List struct{ l endpoints }

// NewList prepares the list of active and inactive endpoints. Safe for concurrent use.
func NewList(active, inactive []endpoint.Endpoint) *List {
	return &List{buildList(active, inactive)}
}

// update installs the list built from active and inactive, keeping the AdapterProxy of every
// endpoint that stays and retiring those of endpoints that left.
func (o *ObjectProxy) update(active, inactive []endpoint.Endpoint) {
	o.install(buildList(active, inactive))
}

// install installs next (which it does not change: it may be shared with other threads).
func (o *ObjectProxy) install(next endpoints) {
	if next.equal(&o.list) && o.adapters != nil {
		return
	}
	old := make(map[addrKey]int, len(o.adapters))
	for i, a := range o.adapters {
		if a != nil {
			old[keyOf(a.Endpoint())] = i
		}
	}
	adapters := make([]*adapterproxy.AdapterProxy, len(next.eps))
	var pools []pool
	if o.conns > 1 {
		pools = make([]pool, len(next.eps))
	}
	for i, e := range next.eps {
		k := keyOf(e)
		if j, ok := old[k]; ok {
			adapters[i] = o.adapters[j]
			if pools != nil {
				pools[i] = o.pools[j]
			}
			delete(old, k)
			continue
		}
		if next.inReg[i] {
			o.open(i, e, adapters, pools)
		}
		// An inactive endpoint (listed for hash stability, not balanced over) gets its
		// AdapterProxies when it is first picked (at): a registry may list thousands of them.
	}
	for _, j := range old {
		o.retire(o.adapters[j])
		if o.pools != nil {
			for _, a := range o.pools[j].conns[1:] {
				o.retire(a)
			}
		}
	}
	o.list, o.adapters, o.pools = next, adapters, pools
	o.view.build()
	o.pickers.build(&o.view)
}

// retire stops a's new calls and keeps it among the retiring until its calls are done.
func (o *ObjectProxy) retire(a *adapterproxy.AdapterProxy) {
	if !a.Retire() {
		o.retiring = append(o.retiring, a)
	}
}

// tickRetiring runs the chores of endpoints that left the list and forgets those done.
func (o *ObjectProxy) tickRetiring(now int64) {
	if len(o.retiring) == 0 {
		return
	}
	keep := o.retiring[:0]
	for _, a := range o.retiring {
		if a.Retire() {
			continue
		}
		a.Tick(now)
		keep = append(keep, a)
	}
	clear(o.retiring[len(keep):])
	o.retiring = keep
}

// Retiring returns how many connections of endpoints that left the list still finish calls. Must be called on
// the loop goroutine.
func (o *ObjectProxy) Retiring() int { return len(o.retiring) }
