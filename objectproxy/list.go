package objectproxy

import (
	"bytes"
	"cmp"
	"slices"
	"sync"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
)

// endpoints is a servant's list as the ObjectProxy reads it on the pick path: active and
// inactive endpoints together, in TarsCpp order, each marked with where it came from. It is a
// copy of its List's (the slices are the List's, read only).
type endpoints struct {
	given  [2][]endpoint.Endpoint // NewList's active and inactive, as given (not copied)
	from   []int32                // endpoint i is given candidate from[i] (below)
	inReg  []bool                 // endpoint i was in the active list
	static bool                   // every active endpoint says -v 1: TarsCpp's static weighting
}

// at returns endpoint i.
func (l *endpoints) at(i int32) endpoint.Endpoint { return candidate(l.given, int(l.from[i])) }

// size returns the number of endpoints.
func (l *endpoints) size() int { return len(l.from) }

// candidate is NewList's candidate k: active[k], then inactive[k-len(active)].
func candidate(given [2][]endpoint.Endpoint, k int) endpoint.Endpoint {
	if k < len(given[0]) {
		return given[0][k]
	}
	return given[1][k-len(given[0])]
}

// List is a servant's endpoint list prepared for Install: merged, filtered and sorted in TarsCpp
// order once, off the loops, and then shared, read only, by the ObjectProxies of every net
// thread. It also holds what the pickers build from the list alone (the weighted lists, the
// ketama ring), built once for all threads, ahead by Prepare or on the first pick that needs it.
// Building it is the costly part of an update; a net thread only matches the endpoints it has
// connections for against it (install), which costs in the number of those, not of the list.
type List struct {
	l      endpoints
	keys   []byte  // the endpoints' TarsKeys, one after the other (read only)
	spans  []span  // keys[spans[i].from:spans[i].to] is endpoint i's TarsKey: increasing
	active []int32 // the indices of the registry's active endpoints, in list order

	weighted once[[]int32] // TarsCpp's weighted list over the active endpoints (staticweight.go)
	router   once[[]int32] // the weighted list over every endpoint, under -v 1 (modhash.go)
	ring     once[ketama]  // the ketama ring over the active hosts (ketama.go)
}

// span is a key's place in List.keys. (Offsets, not slices: sorting them moves no pointer.)
type span struct{ from, to int32 }

// key returns the key of endpoint i.
func (l *List) key(i int) []byte { return l.keys[l.spans[i].from:l.spans[i].to] }

// once is a value of a List built by the first to need it and shared afterwards.
type once[T any] struct {
	o sync.Once
	v T
}

func (c *once[T]) get(build func() T) T {
	c.o.Do(func() { c.v = build() })
	return c.v
}

// cand is one of NewList's candidates: its key and its index k in active, then inactive. Keys
// compare by head first: the 8 bytes that follow the prefix every key shares.
type cand struct {
	head uint64
	span
	k int32
}

// cands holds NewList's scratch candidates between lists.
var cands = sync.Pool{New: func() any { return new([]cand) }}

// NewList prepares the list of active and inactive endpoints a naming source gave: merged (an
// endpoint in both counts as active; repeats count once), sorted in TarsCpp order. As TarsCpp's
// EndpointManager: static weighting applies when every active endpoint says -v 1, and then the
// endpoints of weight 0 are left out. The List keeps active and inactive, not a copy: they must
// not change afterwards. Safe for concurrent use.
func NewList(active, inactive []endpoint.Endpoint) *List { return newList(active, inactive, false) }

// newList is NewList; a direct list (the endpoints of a proxy string) keeps its endpoints of
// weight 0, as TarsCpp's does: they are left out of the static-weight list only, and when all
// weigh 0 the calls go round robin.
func newList(active, inactive []endpoint.Endpoint, direct bool) *List {
	given := [2][]endpoint.Endpoint{active, inactive}
	n := len(active) + len(inactive)
	static, size := len(active) > 0, 0
	for _, list := range given {
		for _, e := range list {
			size += len(e.Host) + 10 // "2:" host ":65535", and a digit more
		}
	}
	for _, e := range active {
		static = static && e.WeightType == endpoint.WeightStatic
	}
	// Every candidate's key in one buffer; sorted by (key, candidate), the first of each run of
	// equal keys is the endpoint's first mention (active before inactive), without a map.
	scratch := cands.Get().(*[]cand)
	cs := (*scratch)[:0]
	l := &List{keys: make([]byte, 0, size)}
	for k := range n {
		e := candidate(given, k)
		if static && !direct && weightOf(e) <= 0 {
			continue
		}
		from := len(l.keys)
		l.keys = e.AppendTarsKey(l.keys)
		cs = append(cs, cand{span: span{int32(from), int32(len(l.keys))}, k: int32(k)})
	}
	key := func(s span) []byte { return l.keys[s.from:s.to] }
	shared := sharedPrefix(l.keys, len(cs), func(j int) span { return cs[j].span })
	for j := range cs {
		cs[j].head = head(key(cs[j].span)[shared:])
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.head != b.head {
			return cmp.Compare(a.head, b.head)
		}
		if c := bytes.Compare(key(a.span), key(b.span)); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	l.l.given, l.l.static = given, static
	l.l.from = make([]int32, 0, len(cs))
	l.l.inReg = make([]bool, 0, len(cs))
	l.spans = make([]span, 0, len(cs))
	for j, c := range cs {
		if j > 0 && bytes.Equal(key(c.span), key(cs[j-1].span)) {
			continue
		}
		in := int(c.k) < len(active)
		if in {
			l.active = append(l.active, int32(len(l.l.from)))
		}
		l.l.from = append(l.l.from, c.k)
		l.l.inReg = append(l.l.inReg, in)
		l.spans = append(l.spans, c.span)
	}
	*scratch = cs[:0]
	cands.Put(scratch)
	return l
}

// sharedPrefix returns the length of the prefix the n keys keys[span(j)] share.
func sharedPrefix(keys []byte, n int, span func(j int) span) int {
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
func head(s []byte) uint64 {
	var h uint64
	for i := range 8 {
		h <<= 8
		if i < len(s) {
			h |= uint64(s[i])
		}
	}
	return h
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
	return l.weighted.get(func() []int32 { return weightedList(&l.l, l.active) })
}

// weightedAll is TarsCpp's static-weight list over every endpoint, active or not, as list
// indices: the mod hash's router under -v 1.
func (l *List) weightedAll() []int32 {
	return l.router.get(func() []int32 { return weightedList(&l.l, allIndices(l.l.size())) })
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
	if l.l.size() != m.l.size() || l.l.static != m.l.static {
		return false
	}
	for i := range int32(l.l.size()) {
		if l.l.at(i) != m.l.at(i) || l.l.inReg[i] != m.l.inReg[i] {
			return false
		}
	}
	return true
}

// find returns the index of key in l, searching from index from on (keys increase), and
// whether it is there; when it is not, the index is where it would be.
func (l *List) find(key []byte, from int) (int, bool) {
	// Gallop from from, then search the bracket: O(log distance), so that matching k sorted
	// keys costs O(k log(n/k)) over the whole list, a merge when k is n.
	lo, step := from, 1
	hi := from
	n := len(l.spans)
	for hi < n && bytes.Compare(l.key(hi), key) < 0 {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, n-1) + 1
	i, ok := slices.BinarySearchFunc(l.spans[lo:hi], key, func(s span, key []byte) int {
		return bytes.Compare(l.keys[s.from:s.to], key)
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
	// The new arrays reuse those of the list before the current one (spare), cleared.
	n := next.l.size()
	adapters := slices.Grow(o.spare.adapters[:0], n)[:n]
	var pools []pool
	if o.conns > 1 {
		pools = slices.Grow(o.spare.pools[:0], n)[:n]
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
			o.open(int(i), next.l.at(i), adapters, pools)
		}
	}
	// An inactive endpoint (listed for hash stability, not balanced over) gets its
	// AdapterProxies when it is first picked (at): a registry may list thousands of them.
	clear(o.adapters)
	clear(o.pools)
	o.spare.adapters, o.spare.pools = o.adapters, o.pools
	o.cur, o.list, o.adapters, o.pools = next, next.l, adapters, pools
	o.view.build()
	o.pickers.build(&o.view)
}

// retire stops a's new calls and keeps it among the retiring until its calls are done.
func (o *ObjectProxy) retire(a *adapterproxy.AdapterProxy) {
	if !a.Retire() {
		o.retiring = append(o.retiring, a)
		return
	}
	o.forgotten(a)
}

// forgotten keeps the counts of a, an AdapterProxy of an endpoint that left, whose calls are
// done: in Traffic, and with Options.Gone.
func (o *ObjectProxy) forgotten(a *adapterproxy.AdapterProxy) {
	addTraffic(&o.gone, a.Stats())
	if o.onGone != nil {
		o.onGone(a)
	}
}

// RetiringAdapters returns the AdapterProxies of endpoints that left the list and still finish
// calls. Read only; must be called on the loop goroutine.
func (o *ObjectProxy) RetiringAdapters() []*adapterproxy.AdapterProxy { return o.retiring }

// tickRetiring runs the chores of endpoints that left the list and forgets those done.
func (o *ObjectProxy) tickRetiring(now int64) {
	if len(o.retiring) == 0 {
		return
	}
	keep := o.retiring[:0]
	for _, a := range o.retiring {
		if a.Retire() {
			o.forgotten(a) // its counts stay in Traffic and with Options.Gone
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
