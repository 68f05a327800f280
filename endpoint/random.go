package endpoint

import "math/rand/v2"

// random picks uniformly among the active nodes, or among all nodes when none is active.
type random struct {
	rng *rand.Rand // PCG; NewBalancer seeds it from the runtime's random source
}

// newRandom returns a random balancer with the given seed (fixed in tests).
func newRandom(seed1, seed2 uint64) *random {
	return &random{rng: rand.New(rand.NewPCG(seed1, seed2))}
}

// Pick implements Balancer.
func (b *random) Pick(nodes []Node, _ uint64) int {
	n := len(nodes)
	if n == 0 {
		return -1
	}
	// Try a node drawn from all of them first: when it is active (the usual case) that is one
	// draw and no scan. Otherwise draw again among the active ones; each active node ends with
	// probability 1/n + (n-k)/n * 1/k = 1/k.
	idx := b.rng.IntN(n)
	if nodes[idx].Active {
		return idx
	}
	k := countActive(nodes)
	if k == 0 {
		return idx
	}
	return nthActive(nodes, b.rng.IntN(k))
}
