package objectproxy_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestP2CRecovers (a guard, passed when written): p2c turns away from an endpoint while it is
// slow and comes back to it once it has recovered: the peak-EWMA latency of an endpoint that gets
// no call decays, so one slow spell does not starve it for good. Nothing else tests the way back.
func TestP2CRecovers(t *testing.T) {
	var slow atomic.Bool
	slow.Store(true)
	a := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		if slow.Load() {
			go func() { time.Sleep(50 * time.Millisecond); s.reply(c, req, 0) }()
			return
		}
		s.reply(c, req, 0)
	})
	b := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) { s.reply(c, req, 0) })
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{a.ep, b.ep}, objectproxy.Options{Balancer: "p2c"})

	call1 := func() string {
		addr, ret, err := wait(t, submit(t, th, o, "Echo", false, 0, 5*time.Second))
		if err != nil || ret != 0 {
			t.Fatalf("call: ret %d, err %v", ret, err)
		}
		return addr
	}
	// Slow spell: once a has answered slowly, p2c sends the next calls to b.
	for range 20 {
		call1()
	}
	if a.count("Echo") == 0 {
		t.Fatalf("p2c sent none of 20 calls to a fresh endpoint")
	}
	toA := 0
	for range 20 {
		if call1() == a.ep.Addr() {
			toA++
		}
	}
	if toA > 10 { // b's replies may be slowed by a busy machine now and then
		t.Errorf("while %s answered in 50ms and %s at once, p2c still sent it %d of 20 sequential calls", a.ep.Addr(), b.ep.Addr(), toA)
	}
	// Recovery: a answers at once again; p2c must come back to it within seconds.
	slow.Store(false)
	deadline := time.Now().Add(15 * time.Second)
	for call1() != a.ep.Addr() {
		if time.Now().After(deadline) {
			t.Fatalf("%s recovered, but p2c sent it no call in 15s: starved after one slow spell", a.ep.Addr())
		}
		time.Sleep(time.Millisecond)
	}
}
