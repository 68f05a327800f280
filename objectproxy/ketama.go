package objectproxy

import "github.com/tarscomm/tarscomm/endpoint"

// ketamaRing is TarsCpp's consistent hash: the ketama ring (endpoint.Ketama) over the active
// hosts, one node per host, weighted by -w when every endpoint says -v 1
// (getConHashProxyForWeight) and 100 each otherwise. When the host a code falls on is unhealthy,
// the code goes to the next healthy host along the ring (where TarsCpp's lookup on the ring
// rebuilt without that host lands); with none, to the mod hash without weights, as TarsCpp's
// getHashProxyForNormal.
type ketamaRing struct {
	ring  *endpoint.Ketama
	node  []int32 // ring node -> list index
	dirty bool
}

func (p *ketamaRing) Build(*View) { p.ring, p.node, p.dirty = nil, p.node[:0], true }

func (p *ketamaRing) Pick(v *View, code uint64) int {
	if p.dirty {
		p.build(v)
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

// build builds the ring: one node per host among the active endpoints (the first in list order).
func (p *ketamaRing) build(v *View) {
	var hosts []string
	var weights []int
	seen := make(map[string]bool, len(v.Active()))
	for _, i := range v.Active() {
		e := v.Endpoint(i)
		if seen[e.Host] {
			continue
		}
		seen[e.Host] = true
		hosts = append(hosts, e.Host)
		weights = append(weights, weightOf(e))
		p.node = append(p.node, i)
	}
	if !v.Static() {
		weights = nil
	}
	p.ring = endpoint.NewKetama(hosts, weights)
	p.dirty = false
}
