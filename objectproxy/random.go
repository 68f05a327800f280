package objectproxy

import "math/rand/v2"

// random is uniform among the healthy active endpoints.
type random struct{ rng *rand.Rand }

func newRandom() *random { return &random{rng: newRand()} }

func (*random) Build(*View) {}

func (p *random) Pick(v *View, _ uint64) int { return v.fromUp(p) }

func (p *random) choose(_ *View, up []int32) int32 { return up[p.rng.IntN(len(up))] }
