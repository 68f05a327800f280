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

// TestWeightZeroKetamaSameHost: a direct list (a proxy string) of two -v 1 endpoints on one
// host, one of weight 0 and one of weight 100, both up, balanced by consistenthash. TarsCpp
// builds its consistent-hash ring from the endpoints of weight > 0 only: every hashed call goes
// to the weight-100 endpoint, as here. Before (once direct lists kept their endpoints of weight
// 0), the ring's node for the host took the weight of the host's first endpoint in list order:
// when that was the weight-0 one, the host had no point on the ring, the pick fell back to code %
// list length, and hashed calls went to the weight-0 endpoint.
func TestWeightZeroKetamaSameHost(t *testing.T) {
	answer := func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, 0) }
	p1, p2 := startRawPeer(t, answer), startRawPeer(t, answer)
	e1, e2 := p1.ep, p2.ep
	e1.WeightType, e2.WeightType = endpoint.WeightStatic, endpoint.WeightStatic
	// The weight-0 endpoint is the one first in TarsCpp order.
	sorted := []endpoint.Endpoint{e1, e2}
	endpoint.SortTars(sorted)
	zero, heavy := p1, p2
	if sorted[0] == e1 {
		e1.Weight, e2.Weight = 0, 100
	} else {
		e1.Weight, e2.Weight = 100, 0
		zero, heavy = p2, p1
	}
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{e1, e2}, objectproxy.Options{Balancer: "consistenthash"})
	const n = 20
	for k := range n {
		if _, _, err := wait(t, submit(t, th, o, "f", true, uint64(k)*7919+1, 5*time.Second)); err != nil {
			t.Fatalf("hashed call %d: %v", k, err)
		}
	}
	if z, h := zero.count("f"), heavy.count("f"); z != 0 {
		t.Fatalf("%d hashed calls (consistenthash, -v 1, weights 0 and 100 on one host): %d went to the weight-0 endpoint, %d to the weight-100 one; "+
			"TarsCpp's ring holds only endpoints of weight > 0: all %d to the weight-100 one", n, z, h, n)
	}
}
