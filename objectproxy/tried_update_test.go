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

// TestRetryAcrossUpdate: a call sent to endpoint X (a refused port) whose list is replaced
// before the refusal arrives is retried on an endpoint it has not tried, by the new list's
// numbering. The list [X, B] becomes [A, X] (A sorts before X, B after): X moves from index 0
// to 1. Before, the call's tried set kept the old index 0, which now names A: the retry read A
// as tried and X as untried, went back to X, was refused again, and the call failed with one
// retry configured although A was up.
func TestRetryAcrossUpdate(t *testing.T) {
	ok := func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, 0) }
	a := startRawPeerOn(t, "127.0.0.1", ok)
	b := startRawPeerOn(t, "127.0.0.3", ok)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	x := endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.2", Port: ln.Addr().(*net.TCPAddr).Port, Weight: -1}
	_ = ln.Close() // refused from now on

	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{x, b.ep}, objectproxy.Options{Balancer: "roundrobin", Retries: 1})

	c := newCall(o, "fast", true, codeFor([]endpoint.Endpoint{x, b.ep}, x), 5*time.Second)
	// c is routed (to X, by its hash) and the list changes in one task of the loop: before the
	// refusal of X's dial can be read. (Submitted, c was routed in a task of its own, and a
	// loaded machine let the refusal in first: the retry went to B, in the list still.)
	th.Execute(func() {
		o.Route(c)
		o.Update([]endpoint.Endpoint{a.ep, x}, nil)
	})
	addr, _, err := wait(t, c)
	if err != nil {
		t.Fatalf("the call failed (%v, last sent to %s); want it retried on %s, which it had not tried", err, addr, a.addr)
	}
	if addr != a.addr {
		t.Fatalf("the call ended on %s; want %s", addr, a.addr)
	}
}
