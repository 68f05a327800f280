package objectproxy

import (
	"slices"

	"github.com/tarscomm/tarscomm/internal/call"

	"github.com/tarscomm/tarscomm/endpoint"
)

// selection holds what picking needs, built when the list changes; only the healthy subset is
// refreshed between changes (on chores, or when a pick meets an endpoint that went unhealthy).
type selection struct {
	active []int32 // indices of the endpoints in the registry's active list, in list order
	up     []int32 // the active ones that were available at the last refresh
	upSnap []bool  // upSnap[k]: whether active[k] was available at the last refresh
	stale  bool    // up must be refreshed before use
	rr     uint32  // round-robin position, pre-incremented as in TarsCpp

	weights []int32 // TarsCpp's static-weight list (indices into the list), if weighting is on
	wpos    uint32

	ring      *endpoint.Ketama // consistent-hash ring over the active hosts, built on first use
	ringNode  []int32          // ring node -> list index
	ringDirty bool
}

// build prepares the selection for o's new list.
func (s *selection) build(o *ObjectProxy) {
	s.active = s.active[:0]
	for i, in := range o.list.inReg {
		if in {
			s.active = append(s.active, int32(i))
		}
	}
	s.upSnap = slices.Grow(s.upSnap[:0], len(s.active))[:len(s.active)]
	s.stale = true
	s.weights, s.wpos = nil, 0
	if o.list.static || o.mode == modeWeighted {
		var idx []int32
		var ws []int
		for _, i := range s.active {
			if w := weightOf(o.list.eps[i]); w > 0 {
				idx = append(idx, i)
				ws = append(ws, w)
			}
		}
		for _, k := range endpoint.StaticWeightList(ws) {
			s.weights = append(s.weights, idx[k])
		}
	}
	s.ring, s.ringNode, s.ringDirty = nil, nil, true
}

// refresh rebuilds up from the endpoints' current availability.
func (s *selection) refresh(o *ObjectProxy, now int64) {
	s.up = s.up[:0]
	for k, i := range s.active {
		ok := o.at(i).Active(now)
		s.upSnap[k] = ok
		if ok {
			s.up = append(s.up, i)
		}
	}
	s.stale = false
}

// checkHealth marks up stale if some endpoint's availability changed since the last refresh.
// It runs on the thread's chores, not per pick.
func (s *selection) checkHealth(o *ObjectProxy, now int64) {
	if s.stale {
		return
	}
	for k, i := range s.active {
		if o.at(i).Active(now) != s.upSnap[k] {
			s.stale = true
			return
		}
	}
}

// pick returns the list index for c, or -1 if the list is empty.
func (o *ObjectProxy) pick(c *call.Call) int {
	switch len(o.adapters) {
	case 0:
		return -1
	case 1:
		return 0
	}
	now := o.loop.Now()
	if c.Hashed {
		if o.mode == modeConsistentHash {
			return o.pickRing(c.Hash, now)
		}
		return o.pickHash(c.Hash, now)
	}
	switch {
	case len(o.sel.weights) > 0:
		return o.pickWeighted(now)
	case o.mode == modeRandom:
		return o.pickRandom(now)
	case o.mode == modeP2C:
		return o.pickP2C(now)
	case o.mode == modeLeastInflight:
		return o.pickLeastInflight(now)
	}
	return o.pickRR(now)
}

func (o *ObjectProxy) ok(i int32, now int64) bool { return o.at(i).Active(now) }

// pickRR is TarsCpp's round robin over the active endpoints, skipping unhealthy ones.
func (o *ObjectProxy) pickRR(now int64) int {
	s := &o.sel
	for range 2 {
		if s.stale {
			s.refresh(o, now)
		}
		n := uint32(len(s.up))
		if n == 0 {
			break
		}
		s.rr++
		if i := s.up[s.rr%n]; o.ok(i, now) {
			return int(i)
		}
		s.stale = true // it went unhealthy since the last refresh: refresh once, pick again
	}
	return o.anyOne()
}

// anyOne is the pick when no endpoint is healthy: calls still go to one, in turn (that is how a
// blocked endpoint gets its retry), among the active ones if there are any.
func (o *ObjectProxy) anyOne() int {
	s := &o.sel
	s.rr++
	if n := uint32(len(s.active)); n > 0 {
		return int(s.active[s.rr%n])
	}
	return int(s.rr % uint32(len(o.adapters)))
}

// pickRandom is uniform among the healthy active endpoints.
func (o *ObjectProxy) pickRandom(now int64) int {
	s := &o.sel
	for range 2 {
		if s.stale {
			s.refresh(o, now)
		}
		n := len(s.up)
		if n == 0 {
			break
		}
		if i := s.up[o.rng.IntN(n)]; o.ok(i, now) {
			return int(i)
		}
		s.stale = true
	}
	return o.anyOne()
}

// pickWeighted walks TarsCpp's static-weight list (its first pick is the list's second entry,
// as in TarsCpp), skipping unhealthy endpoints; after a few misses it falls back to round robin.
func (o *ObjectProxy) pickWeighted(now int64) int {
	s := &o.sel
	n := uint32(len(s.weights))
	for range 8 {
		s.wpos++
		if i := s.weights[s.wpos%n]; o.ok(i, now) {
			return int(i)
		}
	}
	return o.pickRR(now)
}

// pickHash is TarsCpp's getHashProxyForNormal: list[code % n] over every listed endpoint
// (active and inactive, so that indices survive an endpoint going inactive); if that one is not
// active and healthy, active[code % m] over the active endpoints, dropping unhealthy ones and
// trying again until one is healthy.
func (o *ObjectProxy) pickHash(code uint64, now int64) int {
	n := uint64(len(o.adapters))
	i := int32(code % n)
	if o.list.inReg[i] && o.ok(i, now) {
		return int(i)
	}
	act := o.sel.active
	if len(act) == 0 {
		return int(i)
	}
	j := act[code%uint64(len(act))]
	if o.ok(j, now) {
		return int(j)
	}
	// Degraded: some active endpoints are unhealthy. TarsCpp's loop, on a scratch copy.
	left := append(o.scratch[:0], act...)
	for len(left) > 0 {
		k := int(code % uint64(len(left)))
		if o.ok(left[k], now) {
			o.scratch = left[:0]
			return int(left[k])
		}
		left = slices.Delete(left, k, k+1)
	}
	o.scratch = left[:0]
	return o.anyOne()
}

// pickRing is TarsCpp's consistent hash: the ketama ring over the active hosts; when the host a
// code falls on is unhealthy, the next host along the ring that is healthy (which is where
// TarsCpp's lookup on the ring rebuilt without that host lands).
func (o *ObjectProxy) pickRing(code uint64, now int64) int {
	s := &o.sel
	if s.ringDirty {
		s.buildRing(o)
	}
	p := s.ring.Point(uint32(code))
	if p < 0 {
		return o.pickHash(code, now)
	}
	m := s.ring.Len()
	last := int32(-1)
	for step := range m {
		i := s.ringNode[s.ring.Owner((p+step)%m)]
		if i == last {
			continue
		}
		if o.ok(i, now) {
			return int(i)
		}
		last = i
	}
	return o.pickHash(code, now)
}

// buildRing builds the ketama ring: one node per host among the active endpoints (the first
// in list order), weighted by -w under static weighting.
func (s *selection) buildRing(o *ObjectProxy) {
	var hosts []string
	var weights []int
	seen := make(map[string]bool, len(s.active))
	s.ringNode = s.ringNode[:0]
	for _, i := range s.active {
		e := o.list.eps[i]
		if seen[e.Host] {
			continue
		}
		seen[e.Host] = true
		hosts = append(hosts, e.Host)
		weights = append(weights, weightOf(e))
		s.ringNode = append(s.ringNode, i)
	}
	if !o.list.static {
		weights = nil
	}
	s.ring = endpoint.NewKetama(hosts, weights)
	s.ringDirty = false
}

// pickUntried picks a healthy active endpoint c has not tried, then any endpoint it has not
// tried; -1 if it has tried them all.
func (o *ObjectProxy) pickUntried(c *call.Call) int {
	now := o.loop.Now()
	s := &o.sel
	if s.stale {
		s.refresh(o, now)
	}
	tried := func(i int32) bool { return i < 64 && c.Tried&(1<<i) != 0 }
	if n := uint32(len(s.up)); n > 0 {
		for k := range n {
			i := s.up[(s.rr+1+k)%n]
			if !tried(i) && o.ok(i, now) {
				s.rr += k + 1
				return int(i)
			}
		}
	}
	for i := range int32(len(o.adapters)) {
		if !tried(i) {
			return int(i)
		}
	}
	return -1
}
