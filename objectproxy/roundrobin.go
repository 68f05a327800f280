package objectproxy

// roundRobin is TarsCpp's default (getNextValidProxy): the healthy active endpoints in turn. Its
// position is the view's turn, which AnyOne and retries share, as in TarsCpp.
type roundRobin struct{}

func (*roundRobin) Build(*View) {}

func (p *roundRobin) Pick(v *View, _ uint64) int { return v.fromUp(p) }

func (*roundRobin) choose(v *View, up []int32) int32 {
	v.rr++
	return up[v.rr%uint32(len(up))]
}
