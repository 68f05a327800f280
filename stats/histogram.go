package stats

import "time"

// bounds are the upper bounds of the latency buckets: TARS's stat buckets (5, 10, 50, 100, 200,
// 500, 1000, 2000 and 3000 ms, TarsCpp's StatReport time points) with finer ones below 5 ms and
// one at 25 ms for Prometheus. Bucket i holds the samples d with bounds[i-1] <= d < bounds[i]
// (TARS counts a sample in the smallest point it is strictly below); the last bucket holds
// d >= 3s.
var bounds = [...]time.Duration{
	100 * time.Microsecond,
	250 * time.Microsecond,
	500 * time.Microsecond,
	time.Millisecond,
	2500 * time.Microsecond,
	5 * time.Millisecond,
	10 * time.Millisecond,
	25 * time.Millisecond,
	50 * time.Millisecond,
	100 * time.Millisecond,
	200 * time.Millisecond,
	500 * time.Millisecond,
	time.Second,
	2 * time.Second,
	3 * time.Second,
}

// NumBuckets is the number of buckets of a Histogram: one per bound, and one above the last.
const NumBuckets = len(bounds) + 1

// Bounds returns the upper bounds of the first NumBuckets-1 buckets, in increasing order (a fresh
// slice: changing it changes nothing here).
func Bounds() []time.Duration { return append([]time.Duration(nil), bounds[:]...) }

// TarsBounds are TARS's stat buckets in milliseconds, the keys of StatMicMsgBody.intervalCount.
// Each is one of Bounds.
var TarsBounds = [...]int32{5, 10, 50, 100, 200, 500, 1000, 2000, 3000}

// Histogram counts latencies in the fixed buckets of Bounds, with their sum, least and greatest.
// The zero value is empty and ready.
type Histogram struct {
	// Counts[i] is the number of samples in bucket i: at least Bounds()[i-1] (0 for i = 0) and
	// below Bounds()[i]; the last bucket has no upper bound.
	Counts [NumBuckets]uint64
	// Sum is the total of the samples.
	Sum time.Duration
	// Min and Max are the least and the greatest sample, 0 while there is none. In a Delta they
	// may be estimates: see Histogram.Sub.
	Min, Max time.Duration
}

// bucketOf returns the bucket of d. A linear scan: the bounds are few and most calls of a fast
// service end in the first buckets.
func bucketOf(d time.Duration) int {
	for i, b := range bounds {
		if d < b {
			return i
		}
	}
	return len(bounds)
}

// Observe adds the sample d; a negative d (a clock that went backwards) counts as 0.
func (h *Histogram) Observe(d time.Duration) {
	if d < 0 {
		d = 0
	}
	first := h.Sum == 0 && h.Max == 0 && h.empty() // empty() runs only while every sample is 0
	h.Counts[bucketOf(d)]++
	if first {
		h.Min, h.Max = d, d
	} else {
		if d < h.Min {
			h.Min = d
		}
		if d > h.Max {
			h.Max = d
		}
	}
	h.Sum += d
}

func (h *Histogram) empty() bool {
	for _, n := range h.Counts {
		if n != 0 {
			return false
		}
	}
	return true
}

// Count returns the number of samples.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Add merges o into h.
func (h *Histogram) Add(o *Histogram) {
	if o.empty() {
		return
	}
	if h.empty() {
		*h = *o
		return
	}
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Sum += o.Sum
	h.Min = min(h.Min, o.Min)
	h.Max = max(h.Max, o.Max)
}

// Sub returns the samples of h that prev, an earlier state of the same histogram, did not have.
// Counts and Sum are exact. Min and Max are exact when the interval moved them (a new greatest
// or least sample); otherwise they are estimated from the buckets that grew, clamped to h's Min
// and Max: the lower bound of the lowest such bucket and the upper bound of the highest.
func (h Histogram) Sub(prev Histogram) Histogram {
	var d Histogram
	lo, hi := -1, -1
	for i := range h.Counts {
		if h.Counts[i] < prev.Counts[i] { // not an earlier state of h: treat h as new
			return h
		}
		d.Counts[i] = h.Counts[i] - prev.Counts[i]
		if d.Counts[i] != 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	if lo < 0 {
		return Histogram{}
	}
	d.Sum = h.Sum - prev.Sum
	if prev.empty() || h.Max > prev.Max {
		d.Max = h.Max
	} else if hi < len(bounds) {
		d.Max = min(bounds[hi], h.Max)
	} else {
		d.Max = h.Max
	}
	if prev.empty() || h.Min < prev.Min {
		d.Min = h.Min
	} else if lo > 0 {
		d.Min = max(bounds[lo-1], h.Min)
	} else {
		d.Min = h.Min
	}
	d.Min = min(d.Min, d.Max)
	return d
}

// Extremes are the least and the greatest of a run of samples, and how many there were. The
// zero value holds none.
type Extremes struct {
	N        uint64
	Min, Max time.Duration
}

// observe adds the sample d (not negative: Histogram.Observe's d).
func (e *Extremes) observe(d time.Duration) {
	if e.N == 0 {
		e.Min, e.Max = d, d
	} else if d < e.Min {
		e.Min = d
	} else if d > e.Max {
		e.Max = d
	}
	e.N++
}

// Add merges o into e.
func (e *Extremes) Add(o Extremes) {
	switch {
	case o.N == 0:
	case e.N == 0:
		*e = o
	default:
		e.N += o.N
		e.Min = min(e.Min, o.Min)
		e.Max = max(e.Max, o.Max)
	}
}

// Mean returns Sum / Count, 0 for an empty histogram.
func (h *Histogram) Mean() time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	return h.Sum / time.Duration(n)
}

// Quantile estimates the q-quantile (0 <= q <= 1) by linear interpolation within its bucket,
// clamped to [Min, Max]; 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := q * float64(n)
	var seen float64
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= rank {
			lo := time.Duration(0)
			if i > 0 {
				lo = bounds[i-1]
			}
			hi := h.Max
			if i < len(bounds) {
				hi = bounds[i]
			}
			lo = max(lo, h.Min)
			hi = min(hi, h.Max)
			if hi < lo {
				return lo
			}
			return lo + time.Duration(float64(hi-lo)*(rank-seen)/float64(c))
		}
		seen += float64(c)
	}
	return h.Max
}
