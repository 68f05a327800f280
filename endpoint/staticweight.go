package endpoint

import "slices"

// StaticWeightList returns TarsCpp's static-weight dispatch list (EndpointManager's
// dispatchEndpointCache) for candidates with the given weights: a sequence of candidate indices
// that a caller walks round robin, so that over one pass each candidate appears in proportion to
// its weight, interleaved. Callers pass only candidates with a positive weight, as TarsCpp does.
//
// The algorithm, kept exactly for parity with TarsCpp clients:
//
//   - maxR = maxW/minW clamped to [10, 100] (integer division); if minW <= 0, maxR = maxW = 1;
//   - each weight is scaled to w' = w*maxR/maxW; candidates with w' <= 0 are listed first;
//   - then Σw' rounds of smooth weighted round robin over the candidates ordered by current
//     weight (initially w'), ties in insertion order: the candidate with the largest current
//     weight (on a tie, the one inserted last) is listed and loses Σw' - w', every other gains
//     its w'; the next round inserts them in the order this round visited them.
//
// TarsCpp then starts its walk at position 1 (the position is pre-incremented from 0). The cost
// is Σw' rounds of sorting the candidates: fine for tens or hundreds of endpoints.
func StaticWeightList(weights []int) []int32 {
	if len(weights) == 0 {
		return nil
	}
	maxR, maxW := StaticWeightScale(weights)
	type entry struct {
		cur int
		idx int32
		w   int
	}
	var out []int32
	var ring []entry
	total := 0
	for i, w := range weights {
		s := w * maxR / maxW
		if s <= 0 {
			out = append(out, int32(i))
			continue
		}
		ring = append(ring, entry{cur: s, idx: int32(i), w: s})
		total += s
	}
	byCur := func(a, b entry) int { return a.cur - b.cur }
	slices.SortStableFunc(ring, byCur)
	next := make([]entry, 0, len(ring))
	for range total {
		next = next[:0]
		for k := len(ring) - 1; k >= 0; k-- {
			e := ring[k]
			if k == len(ring)-1 {
				out = append(out, e.idx)
				e.cur = e.cur - total + e.w
			} else {
				e.cur += e.w
			}
			next = append(next, e)
		}
		ring, next = next, ring
		slices.SortStableFunc(ring, byCur)
	}
	return out
}

// StaticWeightScale returns TarsCpp's scaling of static weights, w' = w*r/maxW: r is
// maxW/minW clamped to [10, 100] (integer division), or r = maxW = 1 when a weight is 0 or
// less. weights must not be empty.
func StaticWeightScale(weights []int) (r, maxW int) {
	maxW, minW := weights[0], weights[0]
	for _, w := range weights {
		maxW, minW = max(maxW, w), min(minW, w)
	}
	if minW <= 0 {
		return 1, 1
	}
	return min(max(maxW/minW, 10), 100), maxW
}
