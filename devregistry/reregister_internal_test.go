package devregistry

import (
	"slices"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
)

// TestReregisterAfterExpiryIsNew: a registration whose ttl passed is gone (it left
// /objects, Deregister answers 404 for it), so registering that address again is a new
// registration, placed after the live ones, as it is when a query happened to purge the expired
// entry first. Before, Register found the expired, not yet purged entry and kept its old place
// ("a renewal keeps its place"): the order a client got depended on whether someone had looked
// the object up in between.
func TestReregisterAfterExpiryIsNew(t *testing.T) {
	ep := func(s string) endpoint.Endpoint {
		e, err := endpoint.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := ep("tcp -h 127.0.0.1 -p 9001"), ep("tcp -h 127.0.0.1 -p 9002")
	order := func(lookBetween bool) []int {
		now := time.Unix(1000, 0)
		r := &Registry{regs: make(map[string]map[string]registration), now: func() time.Time { return now }}
		r.Register("A.B.C", a, 10*time.Second)
		now = now.Add(time.Second)
		r.Register("A.B.C", b, 0)
		now = now.Add(time.Minute) // a expired long ago
		if lookBetween {
			r.Lookup("A.B.C")
		}
		r.Register("A.B.C", a, 10*time.Second) // the server of a came back
		var ports []int
		for _, e := range r.Lookup("A.B.C").Active {
			ports = append(ports, e.Port)
		}
		return ports
	}
	purged, unpurged := order(true), order(false)
	want := []int{9002, 9001}
	if !slices.Equal(purged, want) || !slices.Equal(unpurged, want) {
		t.Fatalf("re-registering an expired address: order %v with a query in between, %v without; want %v both times (a new registration goes last)",
			purged, unpurged, want)
	}
}
