// Package hist is a log-linear latency histogram that records without allocating: values are
// nanoseconds, kept to about 1.6% (64 sub-buckets per power of two), in a fixed array of 8 KiB. Each
// load-generator worker owns one Histogram; they are merged once at the end.
package hist

import (
	"math"
	"math/bits"
	"time"
)

const (
	subBits    = 6 // 64 sub-buckets per power of two: relative error below 1/64
	subCount   = 1 << subBits
	maxExp     = 36 // 2^37 ns is about 137 s; longer values land in the last bucket
	numBuckets = (maxExp - subBits + 2) * subCount
)

// Histogram counts durations. The zero value is ready to use; it is not safe for concurrent
// use.
type Histogram struct {
	counts [numBuckets]uint32 // 8 KiB: cheap enough for one per worker at c = 4096
	n      uint64
	max    int64
}

// index returns the bucket of v (nanoseconds, >= 0).
func index(v int64) int {
	if v < subCount {
		return int(v)
	}
	e := 63 - bits.LeadingZeros64(uint64(v)) // v in [2^e, 2^(e+1)), e >= subBits
	if e > maxExp {
		return numBuckets - 1
	}
	sub := int(v>>(e-subBits)) - subCount // 0..63
	return (e-subBits+1)*subCount + sub
}

// lowest returns the smallest value of bucket i.
func lowest(i int) int64 {
	if i < subCount {
		return int64(i)
	}
	e := i/subCount + subBits - 1
	sub := int64(i % subCount)
	return (subCount + sub) << (e - subBits)
}

// upper returns the largest value of bucket i; the last bucket has no bound.
func upper(i int) int64 {
	if i+1 >= numBuckets {
		return math.MaxInt64
	}
	return lowest(i+1) - 1
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[index(v)]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest recorded duration (exact).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Merge adds the counts of o to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Quantile returns the duration below which a fraction q (0..1) of the recorded durations
// fall: the upper bound of the bucket holding the value of rank ceil(q*n), capped at Max. It
// returns 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	if float64(rank) < q*float64(h.n) {
		rank++
	}
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			return time.Duration(min(upper(i), h.max))
		}
	}
	return time.Duration(h.max)
}
