package hist

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsCoverValues(t *testing.T) {
	for _, v := range []int64{0, 1, 63, 64, 65, 127, 128, 1000, 123456, 1 << 30, 1<<37 - 1} {
		i := index(v)
		if lo, hi := lowest(i), upper(i); v < lo || v > hi {
			t.Errorf("value %d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if i > 0 && upper(i-1) >= lowest(i) {
			t.Errorf("bucket %d overlaps bucket %d", i-1, i)
		}
	}
}

func TestQuantileWithinOnePointSixPercent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	vals := make([]int64, 100000)
	for i := range vals {
		vals[i] = int64(r.ExpFloat64() * 200e3) // around 200µs
		h.Record(time.Duration(vals[i]))
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := vals[int(q*float64(len(vals)))-1]
		got := int64(h.Quantile(q))
		if got < want || float64(got) > float64(want)*(1+1.0/64)+1 {
			t.Errorf("Quantile(%v) = %d, want %d (+1.6%%)", q, got, want)
		}
	}
	if got, want := h.Max(), time.Duration(vals[len(vals)-1]); got != want {
		t.Errorf("Max = %v, want %v", got, want)
	}
}

func TestMergeAndEmpty(t *testing.T) {
	var a, b Histogram
	if a.Quantile(0.5) != 0 {
		t.Fatalf("empty histogram: Quantile(0.5) = %v, want 0", a.Quantile(0.5))
	}
	a.Record(time.Millisecond)
	b.Record(3 * time.Millisecond)
	a.Merge(&b)
	if a.Count() != 2 || a.Max() != 3*time.Millisecond {
		t.Fatalf("after Merge: count %d max %v, want 2 and 3ms", a.Count(), a.Max())
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	var h Histogram
	if n := testing.AllocsPerRun(100, func() { h.Record(12345) }); n != 0 {
		t.Fatalf("Record allocates %v times, want 0", n)
	}
}
