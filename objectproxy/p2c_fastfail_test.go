package objectproxy_test

import (
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestP2CFastFailingEndpoint: two endpoints under p2c, both healthy by the TARS
// health rules (both answer every call): one serves the call in 5 ms, the other answers at once
// with a framework error (-4, no such servant: a stale registry entry pointing at a process that
// no longer hosts the servant). The p2c cost reads the peak-EWMA latency of every reply, errors
// included, and nothing else of the outcome: the endpoint that fails fastest is the cheapest, and
// with two endpoints p2c draws both on every pick, so it took (almost) every call before: 59 of
// 60 failed where roundrobin (or random) would fail half of them. A reply with ret < 0 now counts
// in the latency as slow as the call's timeout (AdapterProxy.replied).
func TestP2CFastFailingEndpoint(t *testing.T) {
	good := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		r := *req
		go func() {
			time.Sleep(5 * time.Millisecond)
			s.reply(c, &r, 0)
		}()
	})
	bad := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, codec.RetNoServant) })
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{good.ep, bad.ep}, objectproxy.Options{Balancer: "p2c"})
	const n = 60
	failed := 0
	for k := range n {
		_, ret, err := wait(t, submit(t, th, o, "f", false, 0, 5*time.Second))
		if err != nil {
			t.Fatalf("call %d: %v", k, err)
		}
		if ret != 0 {
			failed++
		}
	}
	g, b := good.count("f"), bad.count("f")
	if b > 3*n/4 {
		t.Fatalf("%d sequential calls under p2c over a working endpoint (5 ms) and one answering -4 at once: %d to the working one, %d to the failing one (%d calls failed); "+
			"want the failing endpoint to get no more than its share (roundrobin: %d each), not to take nearly all calls because its errors are fast", n, g, b, failed, n/2)
	}
}
