package objectproxy

import (
	"cmp"
	"slices"

	"github.com/tarscomm/tarscomm/endpoint"
)

// staticWeight walks TarsCpp's static-weight list (getWeightedProxy over the list
// endpoint.StaticWeightList builds from the active endpoints' -w), its first pick being the
// list's second entry as in TarsCpp, skipping unhealthy endpoints as TarsCpp's
// getWeightedForNormal does: through the whole list if need be (up to maxWeightedWalk entries), so
// that the healthy endpoints keep their ratio when a heavy one is down; when none it met is
// healthy it falls back to round robin. It is the pick of calls without a hash code whenever
// every active endpoint says -v 1, whatever the servant's balancer (TarsCpp's rule), and of every
// such call under "weighted".
type staticWeight struct {
	list  []int32 // list indices, in TarsCpp's order: the List's (List.weightedActive), read only
	pos   uint32
	dirty bool
}

func (p *staticWeight) Build(*View) { p.list, p.pos, p.dirty = nil, 0, true }

func (p *staticWeight) Pick(v *View, _ uint64) int {
	if p.dirty {
		p.list = v.o.cur.weightedActive()
		p.dirty = false
	}
	if n := uint32(len(p.list)); n > 0 {
		for range min(n, maxWeightedWalk) {
			p.pos++
			if i := p.list[p.pos%n]; v.Ok(i) {
				return int(i)
			}
		}
	}
	return v.fromUp((*roundRobin)(nil))
}

// maxWeightedWalk bounds the entries one pick walks past unhealthy ones: a smooth weighted list
// places an endpoint's entries in runs of at most ~100 (TarsCpp's scale), so a few down endpoints
// are walked past, and a servant mostly down does not cost each pick a walk of a huge list.
const maxWeightedWalk = 4096

// exactWeightedMax bounds the size of a weighted list built in TarsCpp's exact order
// (endpoint.StaticWeightList costs a sort of the candidates per entry): candidates x entries.
// Above it (thousands of weighted endpoints) the list has the same entries in an order of our
// own (weightedStride), built in O(entries log entries).
const exactWeightedMax = 4 << 20

// weightedList returns TarsCpp's weighted list over the endpoints idx (list indices) that have a
// positive weight, as list indices.
func weightedList(l *endpoints, idx []int32) []int32 {
	var cand []int32
	var ws []int
	var dst []int32
	for _, i := range idx {
		if w := weightOf(l.at(i)); w > 0 {
			cand = append(cand, i)
			ws = append(ws, w)
		}
	}
	if len(cand) == 0 {
		return dst
	}
	if scaled := scaledTotal(ws); len(ws)*scaled > exactWeightedMax {
		return weightedStride(cand, ws, dst)
	}
	for _, k := range endpoint.StaticWeightList(ws) {
		dst = append(dst, cand[k])
	}
	return dst
}

// scaledTotal returns the number of entries of the weighted list of ws.
func scaledTotal(ws []int) int {
	r, maxW := endpoint.StaticWeightScale(ws)
	n := 0
	for _, w := range ws {
		n += max(w*r/maxW, 1)
	}
	return n
}

// weightedStride is the weighted list for many candidates: candidate k appears w'k times (at
// least once), its j-th entry at position (j+1)/w'k of the pass (stride scheduling), ties in
// candidate order.
func weightedStride(cand []int32, ws []int, dst []int32) []int32 {
	r, maxW := endpoint.StaticWeightScale(ws)
	type slot struct {
		at, of int   // the entry's position in the pass: at/of
		k      int32 // the candidate
	}
	var slots []slot
	for k, w := range ws {
		s := max(w*r/maxW, 1)
		for j := range s {
			slots = append(slots, slot{j + 1, s, int32(k)})
		}
	}
	slices.SortFunc(slots, func(a, b slot) int {
		if c := cmp.Compare(a.at*b.of, b.at*a.of); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	for _, s := range slots {
		dst = append(dst, cand[s.k])
	}
	return dst
}
