package objectproxy_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/server"
)

// probeServer starts a project server (one loop, inline handlers) on 127.0.0.1:0 with fn
// registered for Test.Server.Obj; t.Cleanup stops it.
func probeServer(t *testing.T, fn string, h server.HandlerFunc) endpoint.Endpoint {
	t.Helper()
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithNumEventLoop(1))
	if err := s.Handle("Test.Server.Obj", fn, h); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	return endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: addr.(*net.TCPAddr).Port, Weight: -1}
}

// TestRetiredProbedEndpointStopsDialling: an endpoint that the health rules took out (its server
// hangs: a call to it timed out) and that then leaves the servant's list is forgotten once its
// calls are done, and never dialled again (Retire does not wait for the proxy's own ping, and a
// retired proxy sends none). Before, its AdapterProxy kept probing: the probe in flight at the
// update kept Retire from returning true, the chore tick ran the retiring proxy's Tick, which
// probed like a live one, an unanswered probe replaced the connection (a new dial) and the new
// connection sent the next probe at once: the endpoint that left was dialled every ~500 ms.
func TestRetiredProbedEndpointStopsDialling(t *testing.T) {
	release := make(chan struct{})
	hung := probeServer(t, "hang", func(ctx context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		<-release // blocks the server's only loop: nothing on it is answered, pings included
		return rsp, nil
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Stop
	good := probeServer(t, "ok", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		return rsp, nil
	})
	th := rawThread(t, netthread.Options{CheckInterval: time.Millisecond,
		Health: adapterproxy.Health{FrequentFailInvoke: 1}})
	eps := []endpoint.Endpoint{hung, good}
	o := rawObj(t, th, eps, objectproxy.Options{})

	// One call to the hung endpoint times out: it is taken out of rotation and probed.
	if _, _, err := wait(t, submit(t, th, o, "hang", true, codeFor(eps, hung), 200*time.Millisecond)); !errors.Is(err, call.ErrTimeout) {
		t.Fatalf("the call to the hung server ended with %v, want ErrTimeout", err)
	}
	var ap *adapterproxy.AdapterProxy
	runOn(th, func() {
		for _, a := range o.Adapters() {
			if a.Addr() == hung.Addr() {
				ap = a
			}
		}
	})
	probing := false
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !probing; time.Sleep(5 * time.Millisecond) {
		runOn(th, func() { probing = ap.Pending() > 0 && !ap.EndpointStats(0).Active })
	}
	if !probing {
		t.Fatal("the hung endpoint was not taken out of rotation and probed within 3s")
	}

	// The hung endpoint leaves the list (the registry dropped it).
	var dials0 uint64
	runOn(th, func() {
		o.Update([]endpoint.Endpoint{good}, nil)
		dials0 = ap.EndpointStats(0).Reconnects
	})

	// Its probe in flight expires within 500 ms; after that it holds no call and must be
	// forgotten, without another dial.
	var retiring int
	var dials uint64
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		runOn(th, func() {
			retiring = o.Retiring()
			dials = ap.EndpointStats(0).Reconnects
		})
		if dials > dials0+1 && retiring != 0 {
			break // dialled again, twice: it keeps going
		}
	}
	if dials > dials0 || retiring != 0 {
		t.Fatalf("endpoint %s left the list while probed: within 3s it was dialled %d more time(s) and %d retiring connection(s) remain; "+
			"want no new dial to an endpoint that left, and 0 retiring once its probe expired",
			hung.Addr(), dials-dials0, retiring)
	}
}
