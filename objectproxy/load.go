package objectproxy

import "github.com/tarscomm/tarscomm/endpoint"

// The load-aware modes ("least-inflight", "p2c") choose among the healthy active endpoints by
// what each AdapterProxy measures on this net thread: its calls in flight and its peak-EWMA reply
// latency (adapterproxy.Load). They implement the same choices as endpoint's balancers of those
// names (endpoint.LoadCost is the cost both compare) but read the load from the live endpoints
// instead of a Node list, so that a pick builds nothing and allocates nothing.

// cost is endpoint i's endpoint.LoadCost now.
func (o *ObjectProxy) cost(i int32, now int64) float64 {
	lat, n := o.at(i).Load(now)
	return endpoint.LoadCost(lat, n)
}

// pickP2C is the power of two choices over the healthy active endpoints: two distinct ones drawn
// at random, the one of the lower cost wins. Two draws and two cost reads per pick, whatever the
// size of the list.
func (o *ObjectProxy) pickP2C(now int64) int {
	s := &o.sel
	for range 2 {
		if s.stale {
			s.refresh(o, now)
		}
		n := len(s.up)
		if n == 0 {
			break
		}
		i := s.up[0]
		if n > 1 {
			x := o.rng.IntN(n)
			y := o.rng.IntN(n - 1)
			if y >= x {
				y++
			}
			i = s.up[x]
			if j := s.up[y]; o.cost(j, now) < o.cost(i, now) {
				i = j
			}
		}
		if o.ok(i, now) {
			return int(i)
		}
		s.stale = true // it went unhealthy since the last refresh: refresh once, pick again
	}
	return o.anyOne()
}

// pickLeastInflight is the healthy active endpoint with the fewest calls in flight; among equal
// ones, the first after the last pick in list order, so that idle endpoints are taken in turn. It
// scans the healthy list: a pick costs O(endpoints) (p2c is the choice for very long lists).
func (o *ObjectProxy) pickLeastInflight(now int64) int {
	s := &o.sel
	for range 2 {
		if s.stale {
			s.refresh(o, now)
		}
		n := uint32(len(s.up))
		if n == 0 {
			break
		}
		best, bestN, bestK := int32(-1), 0, uint32(0)
		for k := range n {
			i := s.up[(s.rr+1+k)%n]
			if p := o.at(i).Pending(); best < 0 || p < bestN {
				best, bestN, bestK = i, p, k
				if p == 0 {
					break
				}
			}
		}
		if o.ok(best, now) {
			s.rr += bestK + 1
			return int(best)
		}
		s.stale = true
	}
	return o.anyOne()
}
