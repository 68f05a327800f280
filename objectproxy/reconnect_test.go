package objectproxy_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestReconnectAskedMovesCalls: a TarsGo server that restarts gracefully sends "_reconnect_" on
// its connections, stops reading them, answers the calls it read, then closes them. A call made
// after the packet goes on a new connection and is answered, and the call in flight on the old
// one gets its reply. Before, the client only logged the packet: the next call was written to
// the old connection, which nobody read, and failed when the server closed it.
func TestReconnectAskedMovesCalls(t *testing.T) {
	asked := make(chan struct{})
	p := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		if req.FuncName != "slow" {
			s.reply(c, req, 0)
			return
		}
		push := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars,
			RequestID: codec.PushRequestID, ResultDesc: codec.ReconnectDesc})
		s.wmu.Lock()
		_, _ = c.Write(push)
		s.wmu.Unlock()
		close(asked)
		time.Sleep(300 * time.Millisecond) // reads nothing more on c meanwhile
		s.reply(c, req, 0)
		time.Sleep(50 * time.Millisecond)
		_ = c.Close()
	})
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{p.ep}, objectproxy.Options{})
	slow := submit(t, th, o, "slow", false, 0, 5*time.Second)
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not get the slow call")
	}
	time.Sleep(20 * time.Millisecond) // the client reads the packet
	if _, _, err := wait(t, submit(t, th, o, "fast", false, 0, 5*time.Second)); err != nil {
		t.Fatalf("a call made after the server asked to reconnect: %v; want it answered on a new connection", err)
	}
	if _, _, err := wait(t, slow); err != nil {
		t.Fatalf("the call in flight when the server asked to reconnect: %v; want its reply", err)
	}
	if n := p.count("fast"); n != 1 {
		t.Fatalf("the server read the fast call %d times, want 1", n)
	}
}

// TestReconnectAskedThenClosedFailsPending: a server that asked the client to reconnect and then
// closes the old connection without answering a call it had read ends that call at once, with a
// connection error (no reply can come on a closed connection). Before, the call stayed tracked
// until its deadline (here a minute) and ended with ErrTimeout.
func TestReconnectAskedThenClosedFailsPending(t *testing.T) {
	asked := make(chan struct{})
	p := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		if req.FuncName != "lost" {
			s.reply(c, req, 0)
			return
		}
		push := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars,
			RequestID: codec.PushRequestID, ResultDesc: codec.ReconnectDesc})
		s.wmu.Lock()
		_, _ = c.Write(push)
		s.wmu.Unlock()
		close(asked)
		time.Sleep(100 * time.Millisecond)
		_ = c.Close() // never answers "lost"
	})
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{p.ep}, objectproxy.Options{})
	lost := submit(t, th, o, "lost", false, 0, time.Minute)
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not get the call")
	}
	_, _, err := wait(t, lost)
	var ce *call.ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("a call pending on a connection the server closed after asking to reconnect: %v; want a connection error at the close", err)
	}
	if _, _, err := wait(t, submit(t, th, o, "after", false, 0, 5*time.Second)); err != nil {
		t.Fatalf("a call after the close: %v; want it answered on a new connection", err)
	}
}
