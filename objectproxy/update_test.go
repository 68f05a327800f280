package objectproxy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestUpdatesKeepAdapters: over random updates of a servant of up to 300 endpoints (joining,
// leaving, going inactive and back, one list shared by two threads as the Communicator shares
// it), with one and with three connections per endpoint, after each update the endpoints that
// have connections are the active ones and the inactive ones that had connections before; every
// endpoint that had connections keeps the same ones; one that left and comes back gets new ones.
func TestUpdatesKeepAdapters(t *testing.T) {
	for _, conns := range []int{1, 3} {
		t.Run(fmt.Sprintf("connections=%d", conns), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(conns)))
			pool := tailEndpoints(0, 300)
			ths := [2]*objectproxyOnThread{}
			for k := range ths {
				ths[k] = newOnThread(t, pool[:10], conns)
			}
			for round := range 60 {
				var active, inactive []endpoint.Endpoint
				for _, e := range pool {
					switch r.IntN(4) {
					case 0:
						active = append(active, e)
					case 1:
						inactive = append(inactive, e)
					}
				}
				l := objectproxy.NewList(active, inactive)
				l.Prepare("")
				for _, th := range ths {
					th.install(t, round, l, active, inactive)
				}
			}
		})
	}
}

// objectproxyOnThread is an ObjectProxy on its thread with the connections it had, by address.
type objectproxyOnThread struct {
	o       *objectproxy.ObjectProxy
	run     func(func())
	had     map[string][]*adapterproxy.AdapterProxy
	retired map[*adapterproxy.AdapterProxy]bool
}

func newOnThread(t *testing.T, eps []endpoint.Endpoint, conns int) *objectproxyOnThread {
	th := loadThread(t)
	o, err := th.NewObjectProxy(endpoint.Target{Object: "Test.Server.Obj", Endpoints: eps}, objectproxy.Options{Connections: conns})
	if err != nil {
		t.Fatal(err)
	}
	p := &objectproxyOnThread{o: o, run: func(fn func()) { runOn(th, fn) }, retired: map[*adapterproxy.AdapterProxy]bool{}}
	p.run(func() { p.had = p.byAddr() })
	return p
}

func (p *objectproxyOnThread) byAddr() map[string][]*adapterproxy.AdapterProxy {
	m := map[string][]*adapterproxy.AdapterProxy{}
	for _, a := range p.o.Adapters() {
		m[a.Endpoint().Addr()] = append(m[a.Endpoint().Addr()], a)
	}
	return m
}

// install installs l (built from active and inactive) and checks the connections against those
// the ObjectProxy had.
func (p *objectproxyOnThread) install(t *testing.T, round int, l *objectproxy.List, active, inactive []endpoint.Endpoint) {
	t.Helper()
	var now map[string][]*adapterproxy.AdapterProxy
	p.run(func() {
		p.o.Install(l)
		now = p.byAddr()
	})
	want := map[string]bool{}
	for _, e := range active {
		want[e.Addr()] = true
	}
	for _, e := range inactive {
		if p.had[e.Addr()] != nil {
			want[e.Addr()] = true
		}
	}
	if len(now) != len(want) {
		t.Fatalf("round %d: %d endpoints have connections, want %d", round, len(now), len(want))
	}
	for addr := range want {
		as, old := now[addr], p.had[addr]
		if as == nil {
			t.Fatalf("round %d: %s has no connection", round, addr)
		}
		for k, a := range as {
			if old != nil && a != old[k] {
				t.Fatalf("round %d: %s: connection %d was replaced by the update", round, addr, k)
			}
			if p.retired[a] {
				t.Fatalf("round %d: %s came back with a connection retired before", round, addr)
			}
		}
	}
	for addr, as := range p.had {
		if now[addr] == nil {
			for _, a := range as {
				p.retired[a] = true
			}
		}
	}
	p.had = now
}
