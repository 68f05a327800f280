package objectproxy_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestConnectionsAcrossUpdates: with Options.Connections = 3 every active endpoint has three
// AdapterProxies, listed one after the other; an endpoint that stays keeps its three across a
// list update, one that leaves loses all three, one that joins gets three, and an inactive one
// gets its three only when picked.
func TestConnectionsAcrossUpdates(t *testing.T) {
	const n = 3
	th := loadThread(t)
	eps := tailEndpoints(0, 4)
	o, err := th.NewObjectProxy(endpoint.Target{Object: "Test.Server.Obj", Endpoints: eps}, objectproxy.Options{Connections: n})
	if err != nil {
		t.Fatal(err)
	}
	byAddr := func() map[string][]*adapterproxy.AdapterProxy {
		m := map[string][]*adapterproxy.AdapterProxy{}
		var last string
		for _, a := range o.Adapters() {
			addr := a.Endpoint().Addr()
			if _, seen := m[addr]; seen && addr != last {
				t.Fatalf("the connections of %s are not listed together", addr)
			}
			m[addr] = append(m[addr], a)
			last = addr
		}
		return m
	}
	runOn(th, func() {
		before := byAddr()
		if len(before) != len(eps) {
			t.Fatalf("%d endpoints have connections, want %d", len(before), len(eps))
		}
		for addr, as := range before {
			if len(as) != n || as[0] == as[1] {
				t.Fatalf("%s has %d connections (or the same twice), want %d", addr, len(as), n)
			}
		}
		next := append(eps[1:], tailEndpoints(10, 1)...)
		inactive := tailEndpoints(20, 1)
		o.Update(next, inactive)
		after := byAddr()
		if _, ok := after[eps[0].Addr()]; ok {
			t.Errorf("the endpoint that left still has connections")
		}
		if len(after) != len(next) {
			t.Errorf("%d endpoints have connections after the update, want %d (the inactive one has none until picked)", len(after), len(next))
		}
		for _, e := range next {
			as := after[e.Addr()]
			if len(as) != n {
				t.Fatalf("%s has %d connections after the update, want %d", e.Addr(), len(as), n)
			}
			if old, ok := before[e.Addr()]; ok {
				for k := range as {
					if as[k] != old[k] {
						t.Errorf("%s: connection %d was replaced by the update", e.Addr(), k)
					}
				}
			}
		}
	})
}
