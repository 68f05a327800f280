package objectproxy_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// hangingEndpoint returns an endpoint on 127.0.0.1 whose dials hang until their timeout
// (faultproxy.Stalled: a full accept queue nobody accepts from).
func hangingEndpoint(t *testing.T) endpoint.Endpoint {
	t.Helper()
	s, err := faultproxy.ListenStalled()
	if err != nil {
		t.Skipf("cannot make a hanging endpoint: %v", err)
	}
	t.Cleanup(s.Close)
	_, port := s.HostPort()
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: p, Weight: -1}
}

// TestRetryLatencyIsTheEndpoints: a call retried on endpoint B after its dial to
// endpoint A hung for the whole connect-timeout is answered by B at once, and B's peak-EWMA
// latency (what p2c and the load-aware backup pick read) is its own: measured from the call's
// send to B (call.Call.SentAt). Before, it was measured from the call's Start, charging B the
// time the call spent waiting for A: the servant's healthy endpoint looked as slow as the
// connect-timeout of the dead one, and p2c turned away from it for seconds.
func TestRetryLatencyIsTheEndpoints(t *testing.T) {
	const connectTimeout = time.Second
	dead := hangingEndpoint(t)
	b := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, 0) })
	th := rawThread(t, netthread.Options{ConnectTimeout: connectTimeout})
	eps := []endpoint.Endpoint{dead, b.ep}
	o := rawObj(t, th, eps, objectproxy.Options{Balancer: "p2c", Retries: 1})

	// A hashed call goes to the hanging endpoint first (deterministically), its dial times out,
	// and it is retried on b (the hash fallback over the healthy ones).
	c := submit(t, th, o, "Echo", true, codeFor(eps, dead), 10*time.Second)
	addr, ret, err := wait(t, c)
	if err != nil || ret != 0 || addr != b.ep.Addr() {
		t.Fatalf("the call ended at %q with ret %d, err %v; want a reply from %s after its retry", addr, ret, err, b.ep.Addr())
	}
	var lat float64
	runOn(th, func() {
		for _, a := range o.Adapters() {
			if a.Endpoint() == b.ep {
				lat, _ = a.Load(0) // now 0: the last sample's value, undecayed
			}
		}
	})
	if time.Duration(lat) >= connectTimeout {
		t.Errorf("endpoint %s answered its only call at once, but its latency sample is %v (>= the %v connect-timeout "+
			"the call spent on the other endpoint's dial); want the time from the send to %s to its reply",
			b.ep.Addr(), time.Duration(lat), connectTimeout, b.ep.Addr())
	}
}
