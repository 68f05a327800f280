package objectproxy

import (
	"slices"
	"testing"

	"github.com/tarscomm/tarscomm/endpoint"
)

// TestWeightedStride: the weighted list of many candidates (built without TarsCpp's per-entry
// sort) lists each candidate as often as TarsCpp's list does, interleaved: no candidate's
// entries are bunched, and with equal weights it is a plain rotation.
func TestWeightedStride(t *testing.T) {
	for _, ws := range [][]int{{100, 50, 10}, {100, 70, 40, 25, 10}, {100, 100, 100}, {1, 1000}} {
		cand := make([]int32, len(ws))
		for i := range cand {
			cand[i] = int32(10 * i) // list indices, not 0..n-1
		}
		got := weightedStride(cand, ws, nil)
		want := map[int32]int{}
		for _, k := range endpoint.StaticWeightList(ws) {
			want[cand[k]]++
		}
		have := map[int32]int{}
		for _, i := range got {
			have[i]++
		}
		if len(got) != scaledTotal(ws) || len(have) != len(want) {
			t.Fatalf("%v: %d entries %v, want %d as TarsCpp's %v", ws, len(got), have, scaledTotal(ws), want)
		}
		for i, n := range want {
			if have[i] != n {
				t.Errorf("%v: candidate %d listed %d times, TarsCpp's list %d", ws, i, have[i], n)
			}
		}
		// Interleaved: in the first half of the pass each candidate has about half its entries.
		half := map[int32]int{}
		for _, i := range got[:len(got)/2] {
			half[i]++
		}
		for i, n := range want {
			if d := half[i] - n/2; d < -1 || d > 1 {
				t.Errorf("%v: candidate %d has %d of its %d entries in the first half of the pass", ws, i, half[i], n)
			}
		}
	}
	if got := weightedStride([]int32{0, 1, 2}, []int{100, 100, 100}, nil); !slices.Equal(got[:6], []int32{0, 1, 2, 0, 1, 2}) {
		t.Errorf("equal weights: %v, want a rotation", got)
	}
}
