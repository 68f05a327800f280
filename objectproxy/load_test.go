package objectproxy_test

import (
	"fmt"
	"testing"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// loadThread is a net thread for the pick tests; t.Cleanup closes it.
func loadThread(t testing.TB) *netthread.Thread {
	th, err := netthread.New(netthread.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(th.Close)
	return th
}

// tailEndpoints returns n endpoints 10.x.y.z:port that are never dialled (no call is sent).
func tailEndpoints(start, n int) []endpoint.Endpoint {
	eps := make([]endpoint.Endpoint, n)
	for i := range eps {
		k := start + i
		eps[i] = endpoint.Endpoint{Proto: endpoint.TCP, Host: fmt.Sprintf("10.%d.%d.%d", k>>16&255, k>>8&255, k&255), Port: 10000 + k%50000, Weight: -1}
	}
	return eps
}

// runOn runs fn on th's loop and waits for it.
func runOn(th *netthread.Thread, fn func()) {
	done := make(chan struct{})
	th.Execute(func() { fn(); close(done) })
	<-done
}

// TestLoadModesOnLiveLists adds to the shared table (TestPickers) what only the load-aware
// pickers do: least-inflight and p2c read their load from the live AdapterProxies; on lists that
// change, every pick lands on a listed endpoint, idle endpoints share the calls, a pick allocates
// nothing, and a backup never goes where the first call went.
func TestLoadModesOnLiveLists(t *testing.T) {
	tests := []struct {
		name  string
		lists [][]endpoint.Endpoint // Update with each in turn, picking after each
	}{
		{name: "one", lists: [][]endpoint.Endpoint{tailEndpoints(0, 1)}},
		{name: "three", lists: [][]endpoint.Endpoint{tailEndpoints(0, 3)}},
		{name: "grow and shrink", lists: [][]endpoint.Endpoint{tailEndpoints(0, 2), tailEndpoints(0, 7), tailEndpoints(5, 2)}},
		{name: "replaced", lists: [][]endpoint.Endpoint{tailEndpoints(0, 4), tailEndpoints(100, 4)}},
		{name: "many", lists: [][]endpoint.Endpoint{tailEndpoints(0, 1000)}},
	}
	for _, lb := range []string{"p2c", "least-inflight", "roundrobin"} {
		for _, tt := range tests {
			t.Run(lb+"/"+tt.name, func(t *testing.T) {
				th := loadThread(t)
				o, err := th.NewObjectProxy(endpoint.Target{Object: "Test.Server.Obj", Endpoints: tt.lists[0]}, objectproxy.Options{Balancer: lb})
				if err != nil {
					t.Fatal(err)
				}
				c := call.Get()
				defer call.Put(c)
				for _, list := range tt.lists {
					var fail string
					runOn(th, func() {
						o.Update(list, nil)
						n := len(list)
						counts := make([]int, n)
						const picks = 3000
						for range picks {
							i := o.PickNow(c)
							if i < 0 || i >= n {
								fail = fmt.Sprintf("pick %d out of [0, %d)", i, n)
								return
							}
							counts[i]++
						}
						if n <= 10 {
							for i, k := range counts {
								if k < picks/n/2 {
									fail = fmt.Sprintf("idle endpoint %d got %d of %d picks: %v", i, k, picks, counts)
									return
								}
							}
						}
						if allocs := testing.AllocsPerRun(100, func() { o.PickNow(c) }); allocs != 0 {
							fail = fmt.Sprintf("a pick allocates %.1f times", allocs)
							return
						}
						for first := range n {
							c.Tried = 0
							j := o.PickOther(c, first)
							if n == 1 && j != -1 || n > 1 && (j == first || j < 0 || j >= n) {
								fail = fmt.Sprintf("backup of a call sent to %d picked %d of %d", first, j, n)
								return
							}
						}
						c.Tried, c.Tries = 0, 0
					})
					if fail != "" {
						t.Fatal(fail)
					}
				}
			})
		}
	}
}

// BenchmarkPickLoad is the cost of a load-aware pick: flat in the number of endpoints for p2c,
// linear for least-inflight. 0 allocs/op.
func BenchmarkPickLoad(b *testing.B) {
	for _, lb := range []string{"p2c", "least-inflight"} {
		for _, n := range []int{3, 100, 10000} {
			b.Run(fmt.Sprintf("%s/n=%d", lb, n), func(b *testing.B) {
				benchPick(b, lb, tailEndpoints(0, n), false)
			})
		}
	}
}
