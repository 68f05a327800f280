package objectproxy

import "github.com/tarscomm/tarscomm/endpoint"

// ketamaRing is the consistent hash: the ketama ring (endpoint.Ketama) over the active hosts,
// one node per host as TarsGo's (and TarsCpp's before 3.x; TarsCpp 3.x keys its ring by the
// endpoint's description, so endpoints sharing a host are one node here and several there),
// weighted by -w when every active endpoint says -v 1 (getConHashProxyForWeight) and 100 each
// otherwise. When the host a code falls on is unhealthy, the code goes to the next healthy host
// along the ring (where a lookup on the ring rebuilt without that host lands; TarsCpp 3.x
// rehashes the code over the active endpoints instead); with none, to the mod hash without
// weights, as TarsCpp's getHashProxyForNormal.
type ketamaRing struct {
	ketama // the List's (List.ketamaRing), read only
	dirty  bool
}

// ketama is a ring with its nodes' list indices.
type ketama struct {
	ring *endpoint.Ketama
	node []int32 // ring node -> list index
}

func (p *ketamaRing) Build(*View) { p.ketama, p.dirty = ketama{}, true }

func (p *ketamaRing) Pick(v *View, code uint64) int {
	if p.dirty {
		p.ketama, p.dirty = v.o.cur.ketamaRing(), false
	}
	at := p.ring.Point(uint32(code))
	if at < 0 {
		return hashNormal(v, code)
	}
	m := p.ring.Len()
	last := int32(-1)
	for step := range m {
		i := p.node[p.ring.Owner((at+step)%m)]
		if i == last {
			continue
		}
		if v.Ok(i) {
			return int(i)
		}
		last = i
	}
	return hashNormal(v, code)
}

// newKetama builds l's ring: one node per host among the active endpoints (the first in list
// order; under static weighting, the first of weight above 0: a proxy string's endpoints of
// weight 0 are listed, but on no ring, as TarsCpp's).
func newKetama(l *List) ketama {
	var k ketama
	var hosts []string
	var weights []int
	seen := make(map[string]bool, len(l.active))
	for _, i := range l.active {
		e := l.l.at(i)
		if seen[e.Host] || l.l.static && weightOf(e) <= 0 {
			continue
		}
		seen[e.Host] = true
		hosts = append(hosts, e.Host)
		weights = append(weights, weightOf(e))
		k.node = append(k.node, i)
	}
	if !l.l.static {
		weights = nil
	}
	k.ring = endpoint.NewKetama(hosts, weights)
	return k
}
