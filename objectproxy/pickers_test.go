package objectproxy_test

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// hashCode is the i-th hash code of the tests: spread over the uint64 range.
func hashCode(i int) uint64 { return uint64(i) * 0x9e3779b97f4a7c15 }

// picker is one registered balancer on a net thread, for the shared table.
type picker struct {
	t  *testing.T
	th *netthread.Thread
	o  *objectproxy.ObjectProxy
	c  *call.Call
}

func newPicker(t *testing.T, lb string, eps []endpoint.Endpoint) *picker {
	th := loadThread(t)
	o, err := th.NewObjectProxy(endpoint.Target{Object: "Test.Server.Obj", Endpoints: eps}, objectproxy.Options{Balancer: lb})
	if err != nil {
		t.Fatal(err)
	}
	c := call.Get()
	t.Cleanup(func() { call.Put(c) })
	return &picker{t: t, th: th, o: o, c: c}
}

// pick returns the endpoint picked for a call (hashed with code if hashed). On the loop.
func (p *picker) pick(hashed bool, code uint64) endpoint.Endpoint {
	p.c.Hashed, p.c.Hash = hashed, code
	i := p.o.PickNow(p.c)
	if i < 0 {
		p.t.Fatalf("no pick")
	}
	return p.o.EndpointAt(i)
}

// counts picks n calls (hashed ones with codes hashCode(0..n-1)) and counts them per address.
// On the loop.
func (p *picker) counts(hashed bool, n int) map[string]int {
	m := map[string]int{}
	for k := range n {
		m[p.pick(hashed, hashCode(k)).Addr()]++
	}
	return m
}

func addrs(eps []endpoint.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.Addr())
	}
	return out
}

// closedEndpoint returns an endpoint on 127.0.0.1 whose port this test opened and closed:
// connecting to it is refused.
func closedEndpoint(t *testing.T) endpoint.Endpoint {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: port, Weight: -1}
}

// refuse makes the AdapterProxy of e fail a connect (its port refuses), so that a reconnect
// backoff runs, then runs fn on the loop while that endpoint is not Active (a backoff or the
// health rules). The call sent to it may not be retried elsewhere (it has used its try), so
// nothing but e is dialled.
func (p *picker) refuse(e endpoint.Endpoint, fn func()) {
	t := p.t
	for attempt := range 50 {
		c := call.Get()
		var a interface {
			Send(*call.Call)
			Active(int64) bool
		}
		runOn(p.th, func() {
			for _, ap := range p.o.Adapters() {
				if ap.Endpoint() == e {
					a = ap
				}
			}
			if a == nil || !a.Active(p.th.Loop().Now()) {
				return
			}
			c.Dest, c.Servant, c.Func = p.o, "Test.Server.Obj", "f"
			c.Start = p.th.Loop().Now()
			c.Deadline = c.Start + int64(5*time.Second)
			c.Tries = 1
			c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{Version: codec.VersionTars,
				RequestID: codec.RequestIDUnassigned, ServantName: c.Servant, FuncName: c.Func})
			a.Send(c)
		})
		if a == nil {
			t.Fatalf("no AdapterProxy for %s", e.Addr())
		}
		if c.Dest != nil {
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the call to the refusing endpoint did not end")
			}
		}
		call.Put(c)
		ran := false
		runOn(p.th, func() {
			if !a.Active(p.th.Loop().Now()) { // the loop's clock holds still during this task
				fn()
				ran = true
			}
		})
		if ran {
			return
		}
		t.Logf("attempt %d: the backoff ended before the picks ran; again", attempt)
	}
	t.Fatal("never saw the refusing endpoint out of rotation")
}

// TestPickers runs every registered balancer through the same cases.
func TestPickers(t *testing.T) {
	names, _ := objectproxy.Balancers()
	const picks = 5000
	cases := []struct {
		name string
		run  func(t *testing.T, lb string)
	}{
		{"spread", func(t *testing.T, lb string) {
			eps := tailEndpoints(0, 5)
			p := newPicker(t, lb, eps)
			runOn(p.th, func() {
				for _, hashed := range []bool{false, true} {
					m := p.counts(hashed, picks)
					for _, a := range addrs(eps) {
						if m[a] < picks/len(eps)/4 {
							t.Errorf("hashed=%v: %s got %d of %d picks: %v", hashed, a, m[a], picks, m)
						}
					}
				}
			})
		}},
		{"hash sticky, fallback when inactive", func(t *testing.T, lb string) {
			eps := tailEndpoints(0, 5)
			p := newPicker(t, lb, eps)
			const codes = 1000
			var before []endpoint.Endpoint
			runOn(p.th, func() {
				for k := range codes {
					e := p.pick(true, hashCode(k))
					if again := p.pick(true, hashCode(k)); again != e {
						t.Fatalf("code %d went to %s, then %s", k, e.Addr(), again.Addr())
					}
					before = append(before, e)
				}
			})
			gone := before[0]
			var active []endpoint.Endpoint
			for _, e := range eps {
				if e != gone {
					active = append(active, e)
				}
			}
			runOn(p.th, func() {
				p.o.Update(active, []endpoint.Endpoint{gone})
				for k := range codes {
					e := p.pick(true, hashCode(k))
					if e == gone {
						t.Fatalf("code %d went to %s, which the registry lists inactive", k, e.Addr())
					}
					if before[k] != gone && e != before[k] {
						t.Fatalf("code %d moved from %s to %s, though only %s went inactive", k, before[k].Addr(), e.Addr(), gone.Addr())
					}
					if again := p.pick(true, hashCode(k)); again != e {
						t.Fatalf("code %d of the inactive endpoint went to %s, then %s", k, e.Addr(), again.Addr())
					}
				}
			})
		}},
		{"inactive and backoff skipped", func(t *testing.T, lb string) {
			refusing := closedEndpoint(t)
			inactive := tailEndpoints(50, 1)
			eps := append(tailEndpoints(0, 4), refusing)
			p := newPicker(t, lb, eps)
			runOn(p.th, func() { p.o.Update(eps, inactive) })
			p.refuse(refusing, func() {
				for _, hashed := range []bool{false, true} {
					m := p.counts(hashed, picks)
					if m[refusing.Addr()] != 0 || m[inactive[0].Addr()] != 0 {
						t.Errorf("hashed=%v: picks went to the refusing or inactive endpoint: %v", hashed, m)
					}
					for _, a := range addrs(eps[:4]) {
						if m[a] == 0 {
							t.Errorf("hashed=%v: healthy %s got no pick: %v", hashed, a, m)
						}
					}
				}
			})
		}},
		{"list update in the middle", func(t *testing.T, lb string) {
			lists := [][]endpoint.Endpoint{tailEndpoints(0, 5), tailEndpoints(100, 3), append(tailEndpoints(1, 2), tailEndpoints(200, 4)...)}
			p := newPicker(t, lb, lists[0])
			for _, l := range lists {
				runOn(p.th, func() {
					p.o.Update(l, nil)
					for _, hashed := range []bool{false, true} {
						m := p.counts(hashed, picks)
						for a := range m {
							if !slices.Contains(addrs(l), a) {
								t.Errorf("hashed=%v: a pick went to %s, not in the list %v", hashed, a, addrs(l))
							}
						}
						if len(m) != len(l) {
							t.Errorf("hashed=%v: picks went to %d of the %d endpoints: %v", hashed, len(m), len(l), m)
						}
					}
				})
			}
		}},
		{"no allocation per pick", func(t *testing.T, lb string) {
			p := newPicker(t, lb, tailEndpoints(0, 100))
			runOn(p.th, func() {
				k := 0
				for _, hashed := range []bool{false, true} {
					if n := testing.AllocsPerRun(1000, func() { k++; p.pick(hashed, hashCode(k)) }); n != 0 {
						t.Errorf("hashed=%v: a pick allocates %.1f times", hashed, n)
					}
				}
			})
		}},
	}
	for _, lb := range names {
		for _, tc := range cases {
			t.Run(lb+"/"+tc.name, func(t *testing.T) { tc.run(t, lb) })
		}
	}
}

// BenchmarkPickers is the cost of one pick of every registered balancer at 10 and 10,000
// endpoints (a hash balancer's pick of a hashed call, the others' of a call without a hash code).
func BenchmarkPickers(b *testing.B) {
	names, _ := objectproxy.Balancers()
	for _, lb := range names {
		for _, n := range []int{10, 10000} {
			b.Run(fmt.Sprintf("%s/n=%d", lb, n), func(b *testing.B) {
				benchPick(b, lb, tailEndpoints(0, n), lb == "hash" || lb == "consistenthash")
			})
		}
	}
}

// benchPick measures picks of balancer lb over eps, of calls with a hash code if hashed.
func benchPick(b *testing.B, lb string, eps []endpoint.Endpoint, hashed bool) {
	th := loadThread(b)
	o, err := th.NewObjectProxy(endpoint.Target{Object: "Bench.Server.Obj", Endpoints: eps}, objectproxy.Options{Balancer: lb})
	if err != nil {
		b.Fatal(err)
	}
	c := call.Get()
	c.Hashed = hashed
	runOn(th, func() { o.PickNow(c) }) // builds what the picker builds lazily
	b.ReportAllocs()
	b.ResetTimer()
	runOn(th, func() {
		for i := range b.N {
			c.Hash = hashCode(i)
			if o.PickNow(c) < 0 {
				b.Fatal("no pick")
			}
		}
	})
}

// tarsHashRouter is TarsCpp's weighted routing list for mod hash (EndpointManager's
// updateHashProxyWeighted building _hashStaticRouterCache), written from its definition with a
// sorted multimap, independently of the code under test: eps sorted in TarsCpp order, weights
// scaled by maxW/minW clamped to [10, 100], a scaled weight of 0 listed once up front, then one
// entry per round of smooth weighted round robin whose ties go to the entry inserted last.
func tarsHashRouter(weights []int) []int {
	type kv struct{ w, id int }
	insert := func(m []kv, e kv) []kv { // std::multimap: after the equal keys
		i := 0
		for i < len(m) && m[i].w <= e.w {
			i++
		}
		return slices.Insert(m, i, e)
	}
	maxW, minW := weights[0], weights[0]
	for _, w := range weights {
		maxW, minW = max(maxW, w), min(minW, w)
	}
	maxR := 1
	if minW > 0 {
		maxR = min(max(maxW/minW, 10), 100)
	} else {
		maxW = 1
	}
	var router []int
	var byW []kv
	scaled := map[int]int{}
	total := 0
	for id, w := range weights {
		s := w * maxR / maxW
		if s <= 0 {
			router = append(router, id)
			continue
		}
		total += s
		scaled[id] = s
		byW = insert(byW, kv{s, id})
	}
	for range total {
		var next []kv
		for k := len(byW) - 1; k >= 0; k-- {
			e := byW[k]
			if k == len(byW)-1 {
				router = append(router, e.id)
				next = insert(next, kv{e.w - total + scaled[e.id], e.id})
			} else {
				next = insert(next, kv{e.w + scaled[e.id], e.id})
			}
		}
		byW = next
	}
	return router
}

// TestHashStaticWeightsMatchTarsCpp: with every endpoint saying -v 1, a hashed call goes where
// TarsCpp's getHashProxyForWeight sends it, router[code % len(router)] over the weighted list,
// not to list[code % n]. The endpoints are listed shuffled; both sides sort them in TarsCpp
// order.
func TestHashStaticWeightsMatchTarsCpp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights []int // for hosts 10.0.0.1..5
		entries int   // the weighted list's length
	}{
		{"100/70/40/25/10", []int{100, 70, 40, 25, 10}, 24},
		{"five equal", []int{100, 100, 100, 100, 100}, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []endpoint.Endpoint
			for _, h := range []int{3, 1, 5, 2, 4} {
				eps = append(eps, endpoint.Endpoint{Proto: endpoint.TCP, Host: fmt.Sprintf("10.0.0.%d", h), Port: 18015, Weight: tc.weights[h-1], WeightType: endpoint.WeightStatic})
			}
			sorted := slices.Clone(eps)
			endpoint.SortTars(sorted)
			ws := make([]int, len(sorted))
			for i, e := range sorted {
				ws[i] = e.Weight
			}
			router := tarsHashRouter(ws)
			if len(router) != tc.entries {
				t.Fatalf("TarsCpp's list has %d entries, want %d", len(router), tc.entries)
			}
			for _, lb := range []string{"hash", "roundrobin"} {
				p := newPicker(t, lb, eps)
				differ := 0
				runOn(p.th, func() {
					for code := range uint64(4000) {
						want := sorted[router[code%uint64(len(router))]]
						got := p.pick(true, code)
						if got != want {
							t.Fatalf("%s: code %d went to %s, TarsCpp sends it to %s", lb, code, got.Addr(), want.Addr())
						}
						if code < 2000 && got != sorted[code%uint64(len(sorted))] {
							differ++
						}
					}
				})
				if differ == 0 {
					t.Fatalf("%s: no code goes elsewhere than code %% n: the weights change nothing", lb)
				}
				t.Logf("%s: %d of 2000 codes go elsewhere than list[code %% n] (where they went before the fix)", lb, differ)
			}
		})
	}
}
