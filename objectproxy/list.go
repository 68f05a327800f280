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
	old := make(map[addrKey]*adapterproxy.AdapterProxy, len(o.adapters))
	for _, a := range o.adapters {
		if a != nil {
			old[keyOf(a.Endpoint())] = a
		}
	}
	adapters := make([]*adapterproxy.AdapterProxy, len(next.eps))
	for i, e := range next.eps {
		k := keyOf(e)
		if a, ok := old[k]; ok {
			adapters[i] = a
			delete(old, k)
			continue
		}
		if next.inReg[i] {
			adapters[i] = adapterproxy.New(e, o.name, o.loop, o.opts)
		}
		// An inactive endpoint (listed for hash stability, not balanced over) gets its
		// AdapterProxy when it is first picked (at): a registry may list thousands of them.
	}
	for _, a := range old {
		if !a.Retire() {
			o.retiring = append(o.retiring, a)
		}
	}
	o.list, o.adapters = next, adapters
	o.view.build()
	o.pickers.build(&o.view)
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

// Retiring returns how many endpoints that left the list still finish calls. Must be called on
// the loop goroutine.
func (o *ObjectProxy) Retiring() int { return len(o.retiring) }
