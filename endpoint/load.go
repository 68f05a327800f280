package endpoint

import (
	"math"
	"math/rand/v2"
)

// Load-aware balancing: "least-inflight" and "p2c" choose by what each node is doing now, the
// calls it has in flight and how long its replies take, instead of by turn. They need the
// caller to fill Node.Inflight (and Node.Latency for p2c); with both zero they spread calls
// like random picks.

// LoadFloor is the least latency LoadCost counts, in nanoseconds (100µs). An endpoint with no
// measured latency yet (a new one, or one whose latency has decayed away) is charged this much
// per call in flight, so that a burst of calls does not all go to it before its first reply says
// how fast it is.
const LoadFloor = 100e3

// LoadCost is the cost p2c compares: the endpoint's peak-EWMA latency (nanoseconds, at least
// LoadFloor) weighted by its calls in flight, after Finagle's peak EWMA: a slow endpoint costs
// more, and so does a fast one with many calls in flight. The weight is the square root of one
// more than the calls in flight, not Finagle's linear factor: TARS servers serve calls
// concurrently, so a latency measured with n calls in flight already includes their queueing,
// and the linear factor (a serial server's) makes a fast endpoint holding most of a closed-loop
// load look slower than an idle endpoint ten times as slow. Among endpoints of equal latency the
// least loaded still costs least.
func LoadCost(latency float64, inflight int) float64 {
	return math.Max(latency, LoadFloor) * math.Sqrt(float64(inflight+1))
}

// leastInflight picks the active node with the fewest calls in flight; ties go to the node after
// the last one picked, so that equal nodes are taken in turn.
type leastInflight struct {
	next int
}

// Pick implements Balancer.
func (b *leastInflight) Pick(nodes []Node, _ uint64) int {
	n := len(nodes)
	if n == 0 {
		return -1
	}
	if b.next >= n {
		b.next = 0
	}
	best, bestLoad := -1, 0
	for k := range n {
		i := b.next + k
		if i >= n {
			i -= n
		}
		if !nodes[i].Active {
			continue
		}
		if best < 0 || nodes[i].Inflight < bestLoad {
			best, bestLoad = i, nodes[i].Inflight
		}
	}
	if best < 0 {
		best = b.next // none active: rotate over all, as round robin does
	}
	b.next = best + 1
	return best
}

// p2c is the power of two choices: two distinct active nodes drawn at random, the one of the
// lower LoadCost wins. It costs two draws per pick whatever the number of nodes, and converges
// on the fast nodes without herding every caller onto the single best one.
type p2c struct {
	rng *rand.Rand
}

func newP2C(seed1, seed2 uint64) *p2c { return &p2c{rng: rand.New(rand.NewPCG(seed1, seed2))} }

// Pick implements Balancer.
func (b *p2c) Pick(nodes []Node, _ uint64) int {
	n := len(nodes)
	if n == 0 {
		return -1
	}
	k := countActive(nodes)
	switch k {
	case 0:
		return b.rng.IntN(n)
	case 1:
		return nthActive(nodes, 0)
	}
	x := b.rng.IntN(k)
	y := b.rng.IntN(k - 1)
	if y >= x {
		y++
	}
	i, j := nthActive(nodes, x), nthActive(nodes, y)
	if k == n {
		i, j = x, y // all active: no scan
	}
	if LoadCost(nodes[i].Latency, nodes[i].Inflight) <= LoadCost(nodes[j].Latency, nodes[j].Inflight) {
		return i
	}
	return j
}
