package adapterproxy

import (
	"math"
	"testing"
	"time"
)

// TestPeakEWMAOvershoot: latency's own rule is "a sample above the current value
// replaces it at once, one below it is blended in", the current value being the latency decayed
// to now (value, what Load hands p2c). Before, observe compared the sample with the stored,
// undecayed ewma and blended from it: once the value had decayed, a sample between the current
// value and the old peak, or even below the current value, made the latency rise above both the
// current value and the sample: an endpoint that had just answered faster than the balancer
// thought was then rated slower than before that reply.
func TestPeakEWMAOvershoot(t *testing.T) {
	ln2 := math.Ln2
	half := int64(float64(decayTime) * ln2) // the value halves in this time
	cases := []struct {
		name   string
		sample time.Duration
	}{
		{"sample above the current value", 600 * time.Millisecond}, // must replace it: 600ms
		{"sample below the current value", 400 * time.Millisecond}, // may only lower it: <= 500ms
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l latency
			t0 := int64(10 * time.Second)
			l.observe(t0, int64(time.Second)) // one slow reply: 1s
			now := t0 + half
			cur := l.value(now) // 500ms: what the balancer reads now
			if math.Abs(cur-float64(500*time.Millisecond)) > float64(time.Millisecond) {
				t.Fatalf("value after one half-life is %v, want 500ms", time.Duration(cur))
			}
			l.observe(now, int64(tc.sample))
			got := l.value(now)
			want := math.Max(cur, float64(tc.sample)) // the peak rule's upper bound
			if got > want+float64(time.Millisecond) {
				t.Errorf("latency %v, then a reply in %v: latency %v; want at most %v (the larger of the two: "+
					"a sample above the current value replaces it, one below is blended in)",
					time.Duration(cur), tc.sample, time.Duration(got), time.Duration(want))
			}
		})
	}
}
