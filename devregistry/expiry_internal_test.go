package devregistry

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
)

// TestRegistrationExpires: a registration with a ttl leaves the lists once the ttl has passed
// without a renewal; a renewal keeps it, in its place; one without a ttl stays.
func TestRegistrationExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	r := &Registry{regs: make(map[string]map[string]registration), now: func() time.Time { return now }}
	ep := func(port int) endpoint.Endpoint {
		e, err := endpoint.ParseEndpoint("tcp -h 127.0.0.1 -p " + string(rune('0'+port)))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	r.Register("A.B.C", ep(1), 10*time.Second)
	now = now.Add(time.Second)
	r.Register("A.B.C", ep(2), 0)
	ports := func() []int {
		var out []int
		for _, e := range r.Lookup("A.B.C").Active {
			out = append(out, e.Port)
		}
		return out
	}
	now = now.Add(8 * time.Second)
	r.Register("A.B.C", ep(1), 10*time.Second) // renewed at 9s: now expires at 19s
	if got := ports(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("after the renewal: ports %v; want [1 2] (a renewal keeps its place)", got)
	}
	now = now.Add(10 * time.Second) // 19s: not after the expiry yet
	if got := ports(); len(got) != 2 {
		t.Fatalf("at the expiry: ports %v; want both", got)
	}
	now = now.Add(time.Millisecond)
	if got := ports(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("past the expiry: ports %v; want [2]", got)
	}
	if r.Deregister("A.B.C", ep(1)) {
		t.Error("Deregister of an expired registration reported one")
	}
	if !r.Deregister("A.B.C", ep(2)) || len(ports()) != 0 {
		t.Errorf("Deregister: ports %v left", ports())
	}
}
