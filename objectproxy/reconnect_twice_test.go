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

// TestDrainSecondCloseKeepsFirstDrainsCalls: a server asks to reconnect on connection 1
// (it will still answer the slow call it read there), the client moves to connection 2, and the
// server asks to reconnect there too and closes connection 2 at once. The close of connection 2
// ends only the calls written on connection 2: the slow call written on connection 1 is still
// waiting for its reply there, which comes. Before, the second drainer counted every call then
// waiting as its own, and its close failed the slow call.
func TestDrainSecondCloseKeepsFirstDrainsCalls(t *testing.T) {
	asked := make(chan struct{})
	pushReconnect := func(s *rawPeer, c net.Conn) {
		push := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars,
			RequestID: codec.PushRequestID, ResultDesc: codec.ReconnectDesc})
		s.wmu.Lock()
		_, _ = c.Write(push)
		s.wmu.Unlock()
	}
	p := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		switch req.FuncName {
		case "slow": // connection 1: asks to reconnect, answers the call it read a while later
			pushReconnect(s, c)
			close(asked)
			time.Sleep(1500 * time.Millisecond)
			s.reply(c, req, 0)
			time.Sleep(50 * time.Millisecond)
			_ = c.Close()
		case "mid": // connection 2: asks to reconnect and goes away at once
			pushReconnect(s, c)
			time.Sleep(100 * time.Millisecond)
			_ = c.Close()
		default:
			s.reply(c, req, 0)
		}
	})
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{p.ep}, objectproxy.Options{})
	slow := submit(t, th, o, "slow", false, 0, 10*time.Second)
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not get the slow call")
	}
	time.Sleep(200 * time.Millisecond) // the client reads the packet and moves off connection 1
	mid := submit(t, th, o, "mid", false, 0, 10*time.Second)
	_, _, midErr := wait(t, mid)
	if n := p.count("mid"); n != 1 {
		t.Fatalf("the server read the mid call %d times (err %v), want 1 (on connection 2)", n, midErr)
	}
	if _, _, err := wait(t, slow); err != nil {
		t.Fatalf("the slow call written on connection 1 ended with %v when connection 2 closed; want its reply, which the server sent on connection 1 later", err)
	}
}
