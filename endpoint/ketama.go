package endpoint

import (
	"crypto/md5"
	"encoding/binary"
	"slices"
	"strconv"
)

// Ketama is TARS's consistent-hash ring (TarsCpp's TC_ConsistentHashNew with
// E_TC_CONHASH_KETAMAHASH), built the way TarsGo's client builds it, so that a hash code reaches
// the same host from a tarscomm client as from a TarsGo one:
//
//   - one node per host (TarsGo keys the ring by host, as TarsCpp did before 3.x, whose
//     EndpointManager keys it by the endpoint's description: host, port and more, in a format
//     that varies between its versions);
//   - a node of weight w has max(w/4, 1) virtual nodes (w is 100 unless static weighting is on;
//     a node of weight <= 0 is left out); virtual node j is md5("<host>_<j>"), which gives four
//     points, its four little-endian uint32 words;
//   - a code is truncated to uint32; a code at or below the first point or above the last one
//     goes to the first point, any other code to the first point strictly greater than it.
//
// A Ketama is immutable after NewKetama and safe for concurrent use.
type Ketama struct {
	points []uint32
	owners []int32 // owners[i] is the node index (into NewKetama's hosts) of points[i]
}

// NewKetama builds the ring of hosts with weights (weights[i] for hosts[i]; nil means 100 each).
func NewKetama(hosts []string, weights []int) *Ketama {
	type point struct {
		pos   uint32
		owner int32
	}
	var ring []point
	var buf []byte
	for i, h := range hosts {
		w := 100
		if weights != nil {
			w = weights[i]
		}
		if w <= 0 {
			continue
		}
		vn := max(w/4, 1)
		for j := range vn {
			buf = append(append(append(buf[:0], h...), '_'), strconv.Itoa(j)...)
			sum := md5.Sum(buf)
			for k := range 4 {
				ring = append(ring, point{pos: binary.LittleEndian.Uint32(sum[4*k:]), owner: int32(i)})
			}
		}
	}
	slices.SortStableFunc(ring, func(a, b point) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	k := &Ketama{points: make([]uint32, len(ring)), owners: make([]int32, len(ring))}
	for i, p := range ring {
		k.points[i], k.owners[i] = p.pos, p.owner
	}
	return k
}

// Len returns the number of points on the ring.
func (k *Ketama) Len() int { return len(k.points) }

// Point returns the index of the point code falls on, or -1 for an empty ring.
func (k *Ketama) Point(code uint32) int {
	n := len(k.points)
	if n == 0 {
		return -1
	}
	if code <= k.points[0] || code >= k.points[n-1] { // past the last point: the ring wraps
		return 0
	}
	i, _ := slices.BinarySearch(k.points, code+1) // first point >= code+1, i.e. > code
	return i
}

// Owner returns the node index owning point i.
func (k *Ketama) Owner(i int) int { return int(k.owners[i]) }

// Lookup returns the node index code goes to, or -1 for an empty ring.
func (k *Ketama) Lookup(code uint32) int {
	i := k.Point(code)
	if i < 0 {
		return -1
	}
	return int(k.owners[i])
}
