package objectproxy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
)

// referenceList is the list NewList must build, written the plain way: repeats dropped by their
// address (the first mention wins, active before inactive), the endpoints of weight 0 dropped
// under static weighting (which every active endpoint's -v 1 decides, as in TarsCpp), then
// endpoint.SortTars.
func referenceList(active, inactive []endpoint.Endpoint) (eps []endpoint.Endpoint, inReg []bool, static bool) {
	static = len(active) > 0
	for _, e := range active {
		static = static && e.WeightType == endpoint.WeightStatic
	}
	seen := map[string]bool{}
	act := map[string]bool{}
	for k, list := range [][]endpoint.Endpoint{active, inactive} {
		for _, e := range list {
			if static && weightOf(e) <= 0 || seen[e.TarsKey()] {
				continue
			}
			seen[e.TarsKey()], act[e.TarsKey()] = true, k == 0
			eps = append(eps, e)
		}
	}
	endpoint.SortTars(eps)
	for _, e := range eps {
		inReg = append(inReg, act[e.TarsKey()])
	}
	return eps, inReg, static
}

// randomEndpoints returns n endpoints drawn from a small space of protocols, hosts (some
// prefixes of others, an IPv6 one) and ports, so that repeats and near-equal keys are common;
// weights and weight types vary when static says so.
func randomEndpoints(r *rand.Rand, n int, static bool) []endpoint.Endpoint {
	hosts := []string{"10.0.0.1", "10.0.0.10", "10.0.0.2", "10.0.0", "::1", "a", "a.b", "ab"}
	protos := []endpoint.Protocol{endpoint.TCP, endpoint.UDP, endpoint.SSL}
	eps := make([]endpoint.Endpoint, n)
	for i := range eps {
		// Same address, other options (the timeout): the first mention wins.
		e := endpoint.Endpoint{Proto: protos[r.IntN(3)], Host: hosts[r.IntN(len(hosts))], Port: 1 + r.IntN(12), Weight: -1, Timeout: time.Duration(1+r.IntN(2)) * time.Second}
		if static {
			e.WeightType, e.Weight = endpoint.WeightStatic, r.IntN(4)
		}
		eps[i] = e
	}
	return eps
}

// TestNewListMatchesReference: on random lists with repeats (within and across the active and
// inactive lists), near-equal keys and, under static weighting, weights of 0, NewList builds the
// reference's list (order, marks, static), its active indices are the marked ones, and its keys
// are the endpoints' TarsKeys, increasing.
func TestNewListMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		static := round%3 == 0
		active := randomEndpoints(r, r.IntN(20), static)
		inactive := randomEndpoints(r, r.IntN(20), static)
		l := NewList(active, inactive)
		eps, inReg, st := referenceList(active, inactive)
		var got []endpoint.Endpoint
		for i := range int32(l.l.size()) {
			got = append(got, l.l.at(i))
		}
		if !slices.Equal(got, eps) || !slices.Equal(l.l.inReg, inReg) || l.l.static != st {
			t.Fatalf("round %d: NewList(%v, %v) = %v %v %v, want %v %v %v", round, active, inactive, got, l.l.inReg, l.l.static, eps, inReg, st)
		}
		var act []int32
		for i, in := range inReg {
			if in {
				act = append(act, int32(i))
			}
		}
		if !slices.Equal(l.active, act) {
			t.Fatalf("round %d: active %v, want %v", round, l.active, act)
		}
		for i, e := range eps {
			if string(l.key(i)) != e.TarsKey() || i > 0 && string(l.key(i-1)) >= string(l.key(i)) {
				t.Fatalf("round %d: key %d is %q after %q, want %q, increasing", round, i, l.key(i), l.key(max(i-1, 0)), e.TarsKey())
			}
		}
	}
}

// TestListFind: find returns, from any starting index at or before the answer, the index of a
// listed key, or where an unlisted one would go.
func TestListFind(t *testing.T) {
	var eps []endpoint.Endpoint
	for k := range 300 {
		eps = append(eps, endpoint.Endpoint{Proto: endpoint.TCP, Host: fmt.Sprintf("h%d", 2*k), Port: 1, Weight: -1})
	}
	l := NewList(eps, nil)
	n := len(l.spans)
	for k := range 2*n + 1 {
		key := fmt.Sprintf("1:h%d:1", k)
		want, listed := slices.BinarySearchFunc(l.spans, key, func(s span, key string) int {
			return strings.Compare(string(l.keys[s.from:s.to]), key)
		})
		for from := 0; from <= want; from += 1 + from/3 {
			if i, ok := l.find([]byte(key), from); i != want || ok != listed {
				t.Fatalf("find(%q, %d) = %d, %v; want %d, %v", key, from, i, ok, want, listed)
			}
		}
	}
}
