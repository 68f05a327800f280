package objectproxy

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
)

// endpoints is a servant's list as the ObjectProxy reads it on the pick path: active and
// inactive endpoints together, in TarsCpp order, each marked with where it came from. It is a
// copy of its List's slice headers (the slices are the List's, read only).
type endpoints struct {
	eps    []endpoint.Endpoint
	inReg  []bool // eps[i] was in the active list
	static bool   // every endpoint says -v 1: TarsCpp's static weighting
}

// List is a servant's endpoint list prepared for Install: merged, filtered and sorted in TarsCpp
// order once, off the loops, and then shared, read only, by the ObjectProxies of every net
// thread. It also holds what the pickers build from the list alone (the weighted lists, the
// ketama ring), built once for all threads, ahead by Prepare or on the first pick that needs it.
// Building it is the costly part of an update; a net thread only matches the endpoints it has
// connections for against it (install), which costs in the number of those, not of the list.
type List struct {
	l      endpoints
	keys   string  // the endpoints' TarsKeys, one after the other
	spans  []span  // keys[spans[i].from:spans[i].to] is l.eps[i].TarsKey(): increasing
	active []int32 // the indices of the registry's active endpoints, in list order

	weighted once[[]int32] // TarsCpp's weighted list over the active endpoints (staticweight.go)
	router   once[[]int32] // the weighted list over every endpoint, under -v 1 (modhash.go)
	ring     once[ketama]  // the ketama ring over the active hosts (ketama.go)
}

// span is a key's place in List.keys. (Offsets, not strings: sorting them moves no pointer.)
type span struct{ from, to int32 }

// key returns the key of endpoint i.
func (l *List) key(i int) string { return l.keys[l.spans[i].from:l.spans[i].to] }

// once is a value of a List built by the first to need it and shared afterwards.
type once[T any] struct {
	o sync.Once
	v T
}

func (c *once[T]) get(build func() T) T {
	c.o.Do(func() { c.v = build() })
	return c.v
}

// NewList prepares the list of active and inactive endpoints: merged (an endpoint in both counts
// as active; repeats count once), without the endpoints of weight 0 under static weighting (as
// TarsCpp), sorted in TarsCpp order. Safe for concurrent use.
func NewList(active, inactive []endpoint.Endpoint) *List {
	n := len(active) + len(inactive)
	static := n > 0
	for _, e := range active {
		static = static && e.WeightType == endpoint.WeightStatic
	}
	for _, e := range inactive {
		static = static && e.WeightType == endpoint.WeightStatic
	}
	// Every candidate's key in one buffer; sorted by (key, candidate), the first of each run of
	// equal keys is the endpoint's first mention (active before inactive), without a map. Keys
	// compare by head first: the 8 bytes that follow the prefix every key shares.
	type cand struct {
		head uint64
		span
		k int32 // index in active, then inactive
	}
	cands := make([]cand, 0, n)
	buf := make([]byte, 0, n*24)
	for k := range n {
		e := at(active, inactive, k)
		if static && weightOf(e) <= 0 {
			continue
		}
		from := len(buf)
		buf = e.AppendTarsKey(buf)
		cands = append(cands, cand{span: span{int32(from), int32(len(buf))}, k: int32(k)})
	}
	l := &List{keys: string(buf)}
	key := func(s span) string { return l.keys[s.from:s.to] }
	shared := sharedPrefix(l.keys, len(cands), func(j int) span { return cands[j].span })
	for j := range cands {
		cands[j].head = head(key(cands[j].span)[shared:])
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.head != b.head {
			return cmp.Compare(a.head, b.head)
		}
		if c := strings.Compare(key(a.span), key(b.span)); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	l.l.static = static
	l.l.eps = make([]endpoint.Endpoint, 0, len(cands))
	l.l.inReg = make([]bool, 0, len(cands))
	l.spans = make([]span, 0, len(cands))
	for j, c := range cands {
		if j > 0 && key(c.span) == key(cands[j-1].span) {
			continue
		}
		in := int(c.k) < len(active)
		if in {
			l.active = append(l.active, int32(len(l.l.eps)))
		}
		l.l.eps = append(l.l.eps, at(active, inactive, int(c.k)))
		l.l.inReg = append(l.l.inReg, in)
		l.spans = append(l.spans, c.span)
	}
	return l
}

// sharedPrefix returns the length of the prefix the n keys keys[span(j)] share.
func sharedPrefix(keys string, n int, span func(j int) span) int {
	if n == 0 {
		return 0
	}
	first := span(0)
	p := first.to - first.from
	for j := 1; j < n && p > 0; j++ {
		s := span(j)
		a, b := keys[first.from:first.from+p], keys[s.from:s.to]
		k := int32(0)
		for int(k) < min(len(a), len(b)) && a[k] == b[k] {
			k++
		}
		p = k
	}
	return int(p)
}

// head is s's first 8 bytes as a big-endian number, zeros after its end: heads that differ
// order their strings as the strings compare (s's bytes are never compared past its end, and a
// string that ends early is the smaller); equal heads say nothing.
func head(s string) uint64 {
	var h uint64
	for i := range 8 {
		h <<= 8
		if i < len(s) {
			h |= uint64(s[i])
		}
	}
	return h
}

// at is endpoint k of active followed by inactive.
func at(active, inactive []endpoint.Endpoint, k int) endpoint.Endpoint {
	if k < len(active) {
		return active[k]
	}
	return inactive[k-len(active)]
}

// Prepare builds ahead, on the caller's goroutine, what the pickers of balancer (Options.Balancer)
// will read from the list, so that no loop builds it on a pick: the static-weight list when every
// endpoint says -v 1 or the balancer is "weighted", the mod hash's weighted list under -v 1 for a
// hash balancer, the ketama ring for consistenthash. An unknown balancer prepares nothing. Safe
// for concurrent use.
func (l *List) Prepare(balancer string) {
	b, err := lookup(balancer)
	if err != nil {
		return
	}
	if l.l.static {
		l.weightedActive()
	}
	if b.prepare != nil {
		b.prepare(l)
	}
}

// weightedActive is TarsCpp's static-weight list over the active endpoints.
func (l *List) weightedActive() []int32 {
	return l.weighted.get(func() []int32 { return weightedList(l.l.eps, l.active) })
}

// weightedAll is TarsCpp's static-weight list over every endpoint, active or not, as list
// indices: the mod hash's router under -v 1.
func (l *List) weightedAll() []int32 {
	return l.router.get(func() []int32 { return weightedList(l.l.eps, allIndices(len(l.l.eps))) })
}

// ketamaRing is the ketama ring over the active hosts.
func (l *List) ketamaRing() ketama {
	return l.ring.get(func() ketama { return newKetama(l) })
}

// equal reports whether l and m list the same endpoints, marked the same.
func (l *List) equal(m *List) bool {
	if l == m {
		return true
	}
	if len(l.l.eps) != len(m.l.eps) || l.l.static != m.l.static {
		return false
	}
	for i := range l.l.eps {
		if l.l.eps[i] != m.l.eps[i] || l.l.inReg[i] != m.l.inReg[i] {
			return false
		}
	}
	return true
}

// find returns the index of key in l, searching from index from on (keys increase), and
// whether it is there; when it is not, the index is where it would be.
func (l *List) find(key string, from int) (int, bool) {
	// Gallop from from, then search the bracket: O(log distance), so that matching k sorted
	// keys costs O(k log(n/k)) over the whole list, a merge when k is n.
	lo, step := from, 1
	hi := from
	n := len(l.spans)
	for hi < n && l.key(hi) < key {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, n-1) + 1
	i, ok := slices.BinarySearchFunc(l.spans[lo:hi], key, func(s span, key string) int {
		return strings.Compare(l.keys[s.from:s.to], key)
	})
	return lo + i, ok
}

// install installs next (which it does not change: it is shared with other threads), keeping the
// AdapterProxies of every endpoint that stays, retiring those of endpoints that left and
// creating those of active endpoints that joined. Only endpoints with AdapterProxies are
// matched (an inactive endpoint has none until it is picked), by their keys, in order.
func (o *ObjectProxy) install(next *List) {
	if o.cur != nil && next.equal(o.cur) {
		return
	}
	adapters := make([]*adapterproxy.AdapterProxy, len(next.l.eps))
	var pools []pool
	if o.conns > 1 {
		pools = make([]pool, len(next.l.eps))
	}
	from := 0
	for j, a := range o.adapters {
		if a == nil {
			continue
		}
		i, ok := next.find(o.cur.key(j), from)
		from = i
		if !ok {
			o.retire(a)
			if o.pools != nil {
				for _, a := range o.pools[j].conns[1:] {
					o.retire(a)
				}
			}
			continue
		}
		adapters[i] = a
		if pools != nil {
			pools[i] = o.pools[j]
		}
	}
	for _, i := range next.active {
		if adapters[i] == nil {
			o.open(int(i), next.l.eps[i], adapters, pools)
		}
	}
	// An inactive endpoint (listed for hash stability, not balanced over) gets its
	// AdapterProxies when it is first picked (at): a registry may list thousands of them.
	o.cur, o.list, o.adapters, o.pools = next, next.l, adapters, pools
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
