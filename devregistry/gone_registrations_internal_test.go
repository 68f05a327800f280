package devregistry

import (
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
)

// TestGoneRegistrationsLeaveNothing: a registration that is gone (deregistered, or expired and looked at) must
// leave nothing behind in a long-running registry. Servers come and go under ever new object
// names and ports (a development machine restarts them on ":0" all day, and anyone who reaches
// the HTTP interface may register any name): what the registry holds must follow what is
// registered now, not every name ever registered. Before, every object deregistered kept an
// empty map, and expired registrations stayed until a lookup of their own object.
func TestGoneRegistrationsLeaveNothing(t *testing.T) {
	const n = 1000
	ep := func(i int) endpoint.Endpoint {
		e, err := endpoint.ParseEndpoint(fmt.Sprintf("tcp -h 127.0.0.1 -p %d", 10000+i))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	obj := func(i int) string { return fmt.Sprintf("App.Dev%d.Obj", i) }

	t.Run("deregistered", func(t *testing.T) {
		r := &Registry{regs: make(map[string]map[string]registration), now: time.Now}
		for i := range n {
			r.Register(obj(i), ep(i), 0)
		}
		for i := range n {
			if !r.Deregister(obj(i), ep(i)) {
				t.Fatalf("Deregister %s: no registration", obj(i))
			}
		}
		if got := len(r.objects()); got != 0 {
			t.Fatalf("objects after every Deregister: %d; want 0", got)
		}
		if held := len(r.regs); held != 0 {
			t.Fatalf("after %d objects were registered and deregistered, the registry still holds an entry for %d of them "+
				"(an empty map each, never deleted); want none: what it holds must follow what is registered", n, held)
		}
	})

	t.Run("expired", func(t *testing.T) {
		now := time.Unix(1000, 0)
		r := &Registry{regs: make(map[string]map[string]registration), now: func() time.Time { return now }}
		for i := range n {
			r.Register(obj(i), ep(i), time.Second)
		}
		now = now.Add(time.Minute) // every ttl passed long ago, no renewal
		if got := len(r.objects()); got != 0 {
			t.Fatalf("objects after every ttl passed: %d; want 0", got)
		}
		// The HTTP /objects listing (and any object nobody queries) leaves expired registrations
		// where they are: only a lookup of their own object purges them.
		kept := 0
		for _, m := range r.regs {
			kept += len(m)
		}
		if kept != 0 {
			t.Errorf("after %d registrations expired and the objects were listed (GET /objects), %d expired registrations "+
				"are still held (purged only by a query of their own object, which may never come); want none", n, kept)
		}
		for i := range n {
			if l := r.Lookup(obj(i)); len(l.Active) != 0 {
				t.Fatalf("Lookup %s after its ttl: %v; want nothing", obj(i), l.Active)
			}
		}
		held, regs := len(r.regs), 0
		for _, m := range r.regs {
			regs += len(m)
		}
		if held != 0 {
			t.Errorf("after %d registrations expired (and every object was listed and looked up), the registry still holds "+
				"entries for %d objects (%d registrations in them); want none", n, held, regs)
		}
	})
}

// TestRegisterSweepsExpiredObjects: objects whose registrations expired and that nobody lists or
// looks up again are dropped by later registrations (each time the number of objects doubles),
// so a registry that is only registered to does not grow with every name it ever saw.
func TestRegisterSweepsExpiredObjects(t *testing.T) {
	now := time.Unix(1000, 0)
	r := &Registry{regs: make(map[string]map[string]registration), now: func() time.Time { return now }}
	e, err := endpoint.ParseEndpoint("tcp -h 127.0.0.1 -p 10000")
	if err != nil {
		t.Fatal(err)
	}
	const rounds, per = 20, 300
	for round := range rounds {
		for i := range per {
			r.Register(fmt.Sprintf("App.R%dN%d.Obj", round, i), e, time.Second)
		}
		now = now.Add(time.Minute) // this round's registrations expire
	}
	if held, limit := len(r.regs), 2*(per+minSweep); held > limit {
		t.Fatalf("after %d rounds of %d registrations, each expired before the next round, the registry holds %d objects; want at most %d",
			rounds, per, held, limit)
	}
}
