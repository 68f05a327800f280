package objectproxy

// leastInflight is the healthy active endpoint with the fewest calls in flight on this net
// thread; among equal ones, the first after the last pick in list order, so that idle endpoints
// are taken in turn. It scans the healthy list: a pick costs O(endpoints) (p2c is the choice for
// very long lists). A backup request goes to the healthy endpoint of the lowest cost.
type leastInflight struct{ pos uint32 }

func (p *leastInflight) Build(*View) {}

func (p *leastInflight) Pick(v *View, _ uint64) int { return v.fromUp(p) }

func (p *leastInflight) choose(v *View, up []int32) int32 {
	n := uint32(len(up))
	best, bestN, bestK := int32(-1), 0, uint32(0)
	for k := range n {
		i := up[(p.pos+1+k)%n]
		if q := v.Inflight(i); best < 0 || q < bestN {
			best, bestN, bestK = i, q, k
			if q == 0 {
				break
			}
		}
	}
	p.pos += bestK + 1
	return best
}

func (p *leastInflight) pickOther(v *View, avoid int32) int { return cheapestOther(v, avoid) }
