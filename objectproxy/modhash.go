package objectproxy

import "slices"

// modHash is TarsCpp's mod hash (getHashProxy): a code goes to list[code % n] over every listed
// endpoint, active and inactive, so that indices survive an endpoint going inactive. When every
// active endpoint says -v 1 it is getHashProxyForWeight instead: the code indexes TarsCpp's weighted
// list over the listed endpoints (the same list as static weighting's, ratio clamped to at least
// 10, so five equal weights give 50 entries), router[code % len(router)], and an endpoint gets
// codes in proportion to its weight.
//
// If the endpoint a code falls on is not active and healthy, the code is re-hashed over the
// healthy active endpoints (TarsCpp's fallback): a stopped endpoint's codes move to the others
// as soon as this side sees it fail (a TarsCpp client keeps sending them to it until each call
// fails its connect timeout), and come back when it recovers.
type modHash struct {
	router []int32 // the weighted list under static weighting (List.weightedAll, read only); nil otherwise
	dirty  bool
}

func (p *modHash) Build(v *View) { p.router, p.dirty = nil, v.Static() }

func (p *modHash) Pick(v *View, code uint64) int {
	if p.dirty {
		p.router = v.o.cur.weightedAll()
		p.dirty = false
	}
	var i int32
	if n := uint64(len(p.router)); n > 0 {
		i = p.router[code%n]
	} else {
		i = int32(code % uint64(v.Len()))
	}
	if v.Listed(i) && v.Ok(i) {
		return int(i)
	}
	return rehash(v, code, i)
}

// allIndices returns 0..n-1.
func allIndices(n int) []int32 {
	dst := make([]int32, 0, n)
	for i := range int32(n) {
		dst = append(dst, i)
	}
	return dst
}

// hashNormal is TarsCpp's getHashProxyForNormal: list[code % n], then rehash.
func hashNormal(v *View, code uint64) int {
	i := int32(code % uint64(v.Len()))
	if v.Listed(i) && v.Ok(i) {
		return int(i)
	}
	return rehash(v, code, i)
}

// rehash is TarsCpp's fallback when the endpoint a code fell on (i) is not active and healthy:
// active[code % m] over the active endpoints, dropping unhealthy ones and trying again until one
// is healthy; AnyOne when none is (i itself when no endpoint is active).
func rehash(v *View, code uint64, i int32) int {
	act := v.Active()
	if len(act) == 0 {
		return int(i)
	}
	if j := act[code%uint64(len(act))]; v.Ok(j) {
		return int(j)
	}
	// Degraded: some active endpoints are unhealthy. TarsCpp's loop, on a scratch copy.
	left := append(v.scratch[:0], act...)
	for len(left) > 0 {
		k := int(code % uint64(len(left)))
		if v.Ok(left[k]) {
			v.scratch = left[:0]
			return int(left[k])
		}
		left = slices.Delete(left, k, k+1)
	}
	v.scratch = left[:0]
	return v.AnyOne()
}
