package objectproxy_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// endpointsFrom returns n endpoints 10.x.y.z:port that are never dialled (nothing is called).
func endpointsFrom(start, n int) []endpoint.Endpoint {
	eps := make([]endpoint.Endpoint, n)
	for i := range eps {
		k := start + i
		eps[i] = endpoint.Endpoint{Proto: endpoint.TCP, Host: fmt.Sprintf("10.%d.%d.%d", k>>16&255, k>>8&255, k&255), Port: 10000 + k%50000, Weight: -1}
	}
	return eps
}

// onLoop runs fn on t's loop and waits for it.
func onLoop(t *netthread.Thread, fn func()) {
	done := make(chan struct{})
	t.Execute(func() { fn(); close(done) })
	<-done
}

func newThread(b *testing.B) *netthread.Thread {
	th, err := netthread.New(netthread.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(th.Close)
	return th
}

// BenchmarkPick: the cost of choosing an endpoint, flat in the number of endpoints.
func BenchmarkPick(b *testing.B) {
	for _, lb := range []string{"roundrobin", "hash", "consistenthash"} {
		for _, n := range []int{10, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/n=%d", lb, n), func(b *testing.B) {
				benchPick(b, lb, endpointsFrom(0, n), lb != "roundrobin")
			})
		}
	}
}

// BenchmarkScale10k: one servant with 10,000 endpoints on 8 net threads: the memory per endpoint
// before any connection, and an update replacing 1,000 of them (per update, all 8 threads).
func BenchmarkScale10k(b *testing.B) {
	const n, threads = 10000, 8
	ths := make([]*netthread.Thread, threads)
	for i := range ths {
		ths[i] = newThread(b)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	base := endpointsFrom(0, n)
	objs := make([]*objectproxy.ObjectProxy, threads)
	for i, th := range ths {
		o, err := th.NewObjectProxy(endpoint.Target{Object: "Bench.Server.Obj", Endpoints: base}, objectproxy.Options{Balancer: "roundrobin"})
		if err != nil {
			b.Fatal(err)
		}
		objs[i] = o
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEndpoint := float64(after.HeapAlloc-before.HeapAlloc) / float64(n*threads)

	lists := [2][]endpoint.Endpoint{base, append(endpointsFrom(n, 1000), base[1000:]...)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l := objectproxy.NewList(lists[(i+1)%2], nil) // as the Communicator does: once, off the loops
		for k, th := range ths {
			onLoop(th, func() { objs[k].Install(l) })
		}
	}
	b.StopTimer()
	b.ReportMetric(perEndpoint, "heapB/endpoint/thread")
}

// BenchmarkUpdateInactive10k is the update of communicator's BenchmarkCallsDuringUpdates, taken
// apart: a servant of 4 active endpoints and 9,996 inactive ones (listed for hash stability, as
// a registry lists them) on 8 net threads, and an update replacing 1,000 of the inactive ones.
// NewList is the part done once per update off the loops (on the naming goroutine); Install is
// the part each of the 8 loops does (per update, all 8 threads, one after the other).
func BenchmarkUpdateInactive10k(b *testing.B) {
	const n, threads = 10000, 8
	active := endpointsFrom(1<<20, 4)
	base := endpointsFrom(0, n-4)
	lists := [2][]endpoint.Endpoint{base, append(endpointsFrom(n, 1000), base[1000:]...)}
	b.Run("NewList", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := benchcpu.Used(b)
		for i := range b.N {
			objectproxy.NewList(active, lists[i%2])
		}
		benchcpu.Report(b, cpu0)
	})
	b.Run("Install", func(b *testing.B) {
		ths := make([]*netthread.Thread, threads)
		objs := make([]*objectproxy.ObjectProxy, threads)
		for i := range ths {
			ths[i] = newThread(b)
			o, err := ths[i].NewObjectProxy(endpoint.Target{Object: "Bench.Server.Obj", Endpoints: active}, objectproxy.Options{Balancer: "roundrobin"})
			if err != nil {
				b.Fatal(err)
			}
			objs[i] = o
		}
		prepared := [2]*objectproxy.List{objectproxy.NewList(active, lists[0]), objectproxy.NewList(active, lists[1])}
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := benchcpu.Used(b)
		for i := range b.N {
			l := prepared[i%2]
			for k, th := range ths {
				onLoop(th, func() { objs[k].Install(l) })
			}
		}
		benchcpu.Report(b, cpu0)
	})
}
