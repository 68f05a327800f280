package endpoint

import (
	"slices"
	"testing"
)

// TestStaticWeightListVectors checks TarsCpp's static-weight list on the framework notes'
// vectors, ties included.
func TestStaticWeightListVectors(t *testing.T) {
	for _, tc := range []struct {
		weights []int
		want    []int32
	}{
		{[]int{100, 50}, []int32{0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0}},
		{[]int{30, 20, 10}, []int32{0, 1, 0, 2, 0, 1, 0, 1, 0, 2, 0, 1, 0, 1, 0, 2, 0, 1, 0}},
	} {
		if got := StaticWeightList(tc.weights); !slices.Equal(got, tc.want) {
			t.Errorf("StaticWeightList(%v) = %v, want %v", tc.weights, got, tc.want)
		}
	}
	got := StaticWeightList([]int{100, 100, 100})
	if want := []int32{2, 0, 1, 0, 1, 2}; len(got) != 30 || !slices.Equal(got[:6], want) {
		t.Errorf("StaticWeightList(100,100,100) = %v, want 30 entries starting %v", got, want)
	}
	count := map[int32]int{}
	for _, i := range got {
		count[i]++
	}
	if count[0] != 10 || count[1] != 10 || count[2] != 10 {
		t.Errorf("equal weights are not listed equally: %v", count)
	}
}

// TestKetamaVectors checks the ring against the framework notes' vectors (hosts 10.0.0.1-3,
// weight 100).
func TestKetamaVectors(t *testing.T) {
	hosts := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
	k := NewKetama(hosts, nil)
	if k.Len() != 300 {
		t.Fatalf("ring has %d points, want 300 (25 virtual nodes x 4 per host)", k.Len())
	}
	for _, tc := range []struct {
		code uint32
		host string
	}{{0, "10.0.0.2"}, {12345, "10.0.0.2"}, {2147483648, "10.0.0.3"}, {4294967295, "10.0.0.2"}} {
		if got := hosts[k.Lookup(tc.code)]; got != tc.host {
			t.Errorf("Lookup(%d) = %s, want %s", tc.code, got, tc.host)
		}
	}
}

// TestKetamaMovesOnlyNeededKeys: removing a host moves exactly the keys it owned.
func TestKetamaMovesOnlyNeededKeys(t *testing.T) {
	all := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}
	k4 := NewKetama(all, nil)
	k3 := NewKetama(all[:3], nil)
	moved := 0
	for code := uint32(0); code < 1<<32-1<<22; code += 1 << 22 {
		a, b := all[k4.Lookup(code)], all[k3.Lookup(code)]
		if a != b {
			if a != "10.0.0.4" {
				t.Fatalf("code %d moved from %s to %s, though %s stayed", code, a, b, a)
			}
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no key of the removed host moved")
	}
}

func TestTarsKeyOrder(t *testing.T) {
	eps := []Endpoint{
		{Proto: TCP, Host: "10.0.0.2", Port: 1},
		{Proto: UDP, Host: "10.0.0.9", Port: 1},
		{Proto: TCP, Host: "10.0.0.10", Port: 2},
	}
	SortTars(eps)
	var got []string
	for _, e := range eps {
		got = append(got, e.TarsKey())
	}
	want := []string{"0:10.0.0.9:1", "1:10.0.0.10:2", "1:10.0.0.2:1"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
