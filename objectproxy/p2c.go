package objectproxy

import (
	"math"
	"math/rand/v2"
)

// p2c is the power of two choices: two distinct healthy active endpoints drawn at random, the one
// of the lower cost wins. Two draws and two cost reads per pick, whatever the size of the list;
// it converges on the fast endpoints without herding every caller onto the single best one. A
// backup request goes to the healthy endpoint of the lowest cost.
type p2c struct{ rng *rand.Rand }

func newP2C() *p2c { return &p2c{rng: newRand()} }

func (*p2c) Build(*View) {}

func (p *p2c) Pick(v *View, _ uint64) int { return v.fromUp(p) }

func (p *p2c) choose(v *View, up []int32) int32 {
	n := len(up)
	if n == 1 {
		return up[0]
	}
	x := p.rng.IntN(n)
	y := p.rng.IntN(n - 1)
	if y >= x {
		y++
	}
	i, j := up[x], up[y]
	if cost(v, j) < cost(v, i) {
		return j
	}
	return i
}

func (p *p2c) pickOther(v *View, avoid int32) int { return cheapestOther(v, avoid) }

// loadFloor is the least latency loadCost counts, in nanoseconds (100µs). An endpoint with no
// measured latency yet (a new one, or one whose latency has decayed away) is charged this much
// per call in flight, so that a burst of calls does not all go to it before its first reply says
// how fast it is.
const loadFloor = 100e3

// loadCost is the cost the load-aware pickers compare: the endpoint's peak-EWMA latency
// (nanoseconds, at least loadFloor) weighted by its calls in flight, after Finagle's peak EWMA:
// a slow endpoint costs more, and so does a fast one with many calls in flight. The weight is the
// square root of one more than the calls in flight, not Finagle's linear factor: TARS servers
// serve calls concurrently, so a latency measured with n calls in flight already includes their
// queueing, and the linear factor (a serial server's) makes a fast endpoint holding most of a
// closed-loop load look slower than an idle endpoint ten times as slow. Among endpoints of equal
// latency the least loaded still costs least.
func loadCost(latency float64, inflight int) float64 {
	return math.Max(latency, loadFloor) * math.Sqrt(float64(inflight+1))
}

// cost is endpoint i's loadCost now.
func cost(v *View, i int32) float64 { return loadCost(v.Load(i)) }

// cheapestOther is the load-aware pickers' backup pick: the healthy active endpoint of the lowest
// cost other than avoid; -1 if there is none.
func cheapestOther(v *View, avoid int32) int {
	best, bestCost := int32(-1), 0.0
	for _, i := range v.Up() {
		if i == avoid || !v.Ok(i) {
			continue
		}
		if c := cost(v, i); best < 0 || c < bestCost {
			best, bestCost = i, c
		}
	}
	return int(best)
}
