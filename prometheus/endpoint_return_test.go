package tarsprom_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/naming"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// pushSource is a naming.Source whose list the test sets.
type pushSource struct {
	mu    sync.Mutex
	push  func(naming.List)
	ready chan struct{}
}

func (s *pushSource) Watch(_ naming.Query, push func(naming.List)) func() {
	s.mu.Lock()
	s.push = push
	s.mu.Unlock()
	close(s.ready)
	return func() {
		s.mu.Lock()
		s.push = nil
		s.mu.Unlock()
	}
}

func (s *pushSource) set(t *testing.T, addrs ...string) {
	t.Helper()
	var l naming.List
	for _, a := range addrs {
		host, port, _ := net.SplitHostPort(a)
		ep, err := endpoint.ParseEndpoint("tcp -h " + host + " -p " + port)
		if err != nil {
			t.Fatal(err)
		}
		l.Active = append(l.Active, ep)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push(l)
}

// gatherMap gathers reg into name -> metric family.
func gatherMap(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return byName(mfs)
}

// TestEndpointCountersAcrossLeaveAndReturn: endpoint A of a servant gets calls that
// time out; it leaves the servant's list (B replaces it) and comes back a moment later. The
// call counters of A are kept across (stats retention: calls_total{endpoint=A,result=timeout}
// stays 3), and so are the endpoint counters of the same endpoint, whose series keeps its labels
// across (netthread keeps the counters of an endpoint's forgotten connections). Before,
// tarscomm_endpoint_timeouts_total{endpoint=A} went from 3 to 0 while the calls it counts were
// still counted 3: a counter reset Prometheus reads as a restart, and a scrape that disagreed
// with itself (3 timed-out calls, 0 timeouts).
func TestEndpointCountersAcrossLeaveAndReturn(t *testing.T) {
	a, b := startLive(t), startLive(t)
	src := &pushSource{ready: make(chan struct{})}
	comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(liveObj, &sp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _, _ = sp.InvokeRaw(ctx, "Echo", []byte("x")) }() // starts the watch
	select {
	case <-src.ready:
	case <-time.After(liveBound):
		t.Fatal("the naming source was never asked")
	}
	src.set(t, a)
	const nTimeout = 3
	for i := range nTimeout {
		if _, err := sp.InvokeRaw(ctx, "Block", nil, servantproxy.WithTimeout(100*time.Millisecond)); !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("Block %d: %v, want a timeout", i, err)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	epA := map[string]string{"servant": liveObj, "endpoint": a}
	callA := map[string]string{"servant": liveObj, "endpoint": a, "function": "Block", "result": "timeout"}
	before := gatherMap(t, reg)
	t.Logf("before: endpoint_timeouts_total{A} %v, calls_total{A,timeout} %v",
		sum(before, "tarscomm_endpoint_timeouts_total", epA), sum(before, "tarscomm_client_calls_total", callA))
	if sum(before, "tarscomm_endpoint_timeouts_total", epA) != nTimeout {
		t.Fatalf("endpoint_timeouts_total{A} %v before A left, want %d", sum(before, "tarscomm_endpoint_timeouts_total", epA), nTimeout)
	}

	// A leaves (B serves), then comes back.
	src.set(t, b)
	waitFor(t, "B to serve the calls", func() bool {
		rsp, err := sp.InvokeRaw(ctx, "Echo", []byte("b"))
		return err == nil && string(rsp) == "b" && sum(gatherMap(t, reg), "tarscomm_client_calls_total", map[string]string{"endpoint": b, "result": "ok"}) > 0
	})
	src.set(t, a)
	waitFor(t, "A to be listed again", func() bool {
		_, _ = sp.InvokeRaw(ctx, "Echo", []byte("a"))
		return len(matching(gatherMap(t, reg), "tarscomm_endpoint_timeouts_total", epA)) > 0
	})
	after := gatherMap(t, reg)
	gotCalls, gotEp := sum(after, "tarscomm_client_calls_total", callA), sum(after, "tarscomm_endpoint_timeouts_total", epA)
	if gotCalls != nTimeout {
		t.Errorf("calls_total{A,Block,timeout} %v after A came back, want %d", gotCalls, nTimeout)
	}
	if gotEp < nTimeout {
		t.Errorf("tarscomm_endpoint_timeouts_total{servant,endpoint=A} went down from %d to %v as A left and came back "+
			"(same labels: a counter reset), while calls_total{A,timeout} in the same scrape is %v", nTimeout, gotEp, gotCalls)
	}
}
