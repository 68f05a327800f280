package endpoint

import (
	"cmp"
	"math/bits"
	"slices"
)

// virtualNodes is the number of points each endpoint has on the ring. 160 is ketama's number;
// with it an endpoint's share of keys is typically within 10% of 1/n (measured: 0.92..1.13 of
// 1/n for 10 endpoints, 0.82..1.22 for 50).
const virtualNodes = 160

// consistentHash places virtualNodes points per endpoint on a ring of uint64, each derived from
// Endpoint.Addr(), and sends a key to the owner of the first point at or after the key's (mixed)
// hash. Adding or removing one of n endpoints therefore moves about 1/n of the keys, and only to or
// from that endpoint. An inactive endpoint's keys go to the next active owner along the ring and
// come back when it recovers; with no active endpoint the key's own owner is returned.
//
// The ring is rebuilt only when the node list changes (a different length, or a different host
// or port at some index), which Pick checks by comparing those fields: no hashing, no allocation.
// Activity changes need no rebuild. The ring does not depend on the order of the list, only on
// the addresses in it.
type consistentHash struct {
	// hosts and ports are the node list the ring was built for.
	hosts []string
	ports []int

	points []uint64 // sorted ring positions
	owners []int32  // owners[i] is the index of the node owning points[i]

	// bucket[b] is the index of the first point whose top bits are >= b, so that a lookup starts
	// next to its answer instead of binary searching: about one point per bucket.
	bucket []int32
	shift  uint // 64 - log2(len(bucket)-1)
}

// Pick implements Balancer.
func (b *consistentHash) Pick(nodes []Node, key uint64) int {
	if len(nodes) == 0 {
		return -1
	}
	if b.changed(nodes) {
		b.rebuild(nodes)
	}
	m := len(b.points)
	h := mix64(key)
	i := int(b.bucket[h>>b.shift])
	for i < m && b.points[i] < h {
		i++
	}
	if i == m {
		i = 0
	}
	if o := b.owners[i]; nodes[o].Active || countActive(nodes) == 0 {
		return int(o)
	}
	for j := 1; j < m; j++ {
		k := i + j
		if k >= m {
			k -= m
		}
		if o := b.owners[k]; nodes[o].Active {
			return int(o)
		}
	}
	return int(b.owners[i]) // not reached: some node is active
}

// changed reports whether nodes differs from the list the ring was built for.
func (b *consistentHash) changed(nodes []Node) bool {
	if len(nodes) != len(b.hosts) {
		return true
	}
	for i := range nodes {
		// Equal strings that share their bytes compare without reading them.
		if nodes[i].Endpoint.Port != b.ports[i] || nodes[i].Endpoint.Host != b.hosts[i] {
			return true
		}
	}
	return false
}

// rebuild builds the ring for nodes.
func (b *consistentHash) rebuild(nodes []Node) {
	b.hosts = b.hosts[:0]
	b.ports = b.ports[:0]
	type point struct {
		pos   uint64
		owner int32
	}
	ring := make([]point, 0, len(nodes)*virtualNodes)
	for i := range nodes {
		e := &nodes[i].Endpoint
		b.hosts = append(b.hosts, e.Host)
		b.ports = append(b.ports, e.Port)
		seed := fnv64a(e.Addr())
		for v := uint64(0); v < virtualNodes; v++ {
			ring = append(ring, point{pos: mix64(seed + v*0x9e3779b97f4a7c15), owner: int32(i)})
		}
	}
	slices.SortFunc(ring, func(x, y point) int {
		if c := cmp.Compare(x.pos, y.pos); c != 0 {
			return c
		}
		return cmp.Compare(x.owner, y.owner)
	})
	b.points = b.points[:0]
	b.owners = b.owners[:0]
	for _, p := range ring {
		b.points = append(b.points, p.pos)
		b.owners = append(b.owners, p.owner)
	}

	nbits := bits.Len(uint(len(ring) - 1)) // 1<<nbits >= len(ring)
	b.shift = uint(64 - nbits)
	b.bucket = slices.Grow(b.bucket[:0], 1<<nbits+1)[:1<<nbits+1]
	j := 0
	for k := range b.bucket {
		for j < len(b.points) && b.points[j]>>b.shift < uint64(k) {
			j++
		}
		b.bucket[k] = int32(j)
	}
}

// fnv64a is the 64-bit FNV-1a hash of s.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix64 is the finalizer of SplitMix64: a bijection that spreads nearby inputs (keys 1, 2, 3 ...,
// or a seed plus multiples of the golden ratio) over the whole ring.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
