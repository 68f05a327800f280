package communicator_test

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
)

// restartingPeer is a raw TARS peer that restarts the TarsGo way on its first connection:
// it reads a "slow" call (answering it only when the test says), then a "move" call, which it
// answers together with a `_reconnect_` packet in front of the reply: the client moves off the
// connection once it has read both, with the slow call still waiting for its reply there.
type restartingPeer struct {
	*rawServer
	release chan struct{} // closed by the test: the slow call's reply goes out
	sent    chan error    // the slow reply's write
}

func startRestartingPeer(t *testing.T) *restartingPeer {
	t.Helper()
	endToEnd(t)
	p := &restartingPeer{release: make(chan struct{}), sent: make(chan error, 1)}
	var once sync.Once
	p.rawServer = serveRaw(t, listenLoopback(t), func(n int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		if n > 1 {
			// A later connection (the restarted process, not ready): it reads one request and
			// closes the connection without answering.
			_ = readRequests(c, 0, func(*codec.RequestPacket) bool { return false })
			return
		}
		var slow *codec.RequestPacket
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			switch req.FuncName {
			case "slow":
				cp := *req
				slow = &cp
				return true
			case "move":
				out := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars,
					RequestID: codec.PushRequestID, ResultDesc: codec.ReconnectDesc})
				out = append(out, replyFrame(req, req.RequestID, []byte("moved"))...)
				if _, err := c.Write(out); err != nil {
					return false
				}
				if slow != nil {
					once.Do(func() {
						go func() {
							select {
							case <-p.release:
								_, err := c.Write(replyFrame(slow, slow.RequestID, []byte("slow reply")))
								p.sent <- err
							case <-time.After(2 * live):
							}
						}()
					})
				}
				return true // reads on: a restarting TarsGo server would not, nothing more comes
			default:
				_, err := c.Write(replyFrame(req, req.RequestID, req.Buffer))
				return err == nil
			}
		})
		<-p.release // keep the connection open until the slow reply was sent
		time.Sleep(100 * time.Millisecond)
	})
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
	})
	return p
}

// TestDrainedCallSurvivesFailedRedial: a TarsGo server restarting gracefully sends
// `_reconnect_`; the README promises that "the calls in flight still get their replies on the old
// one". Here the next connect is refused (the new process is not listening yet): that call fails,
// as it should, but the failed dial must not end the call still waiting on the old connection,
// whose reply comes there afterwards. Before, the failed dial failed it too (drop ended every
// call of the AdapterProxy's table, those a drainer held included).
func TestDrainedCallSurvivesFailedRedial(t *testing.T) {
	p := startRestartingPeer(t)
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, p.endpoint())
	ctx := testCtx(t)

	type result struct {
		body []byte
		err  error
	}
	slow := make(chan result, 1)
	if err := sp.AsyncInvokeRaw(ctx, "slow", nil, func(b []byte, err error) { slow <- result{b, err} }); err != nil {
		t.Fatalf("slow call: %v", err)
	}
	if b, err := sp.InvokeRaw(ctx, "move", nil); err != nil || string(b) != "moved" {
		t.Fatalf("move call: %q, %v", b, err)
	}
	// The client has moved off connection 1 (the packet came in the same write as the reply it
	// just returned). The new process is not there: the next connect is refused.
	_ = p.ln.Close()
	_, err := sp.InvokeRaw(ctx, "next", nil)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("a call after the server asked to reconnect, with its port closed: %v; want ErrConnection (refused)", err)
	}
	select {
	case r := <-slow:
		t.Fatalf("the slow call, written on the old connection that is still open, ended with %v (%q) when the new connect was refused, before its reply was even sent; want the reply the server sends on the old connection", r.err, r.body)
	case <-time.After(200 * time.Millisecond):
	}
	close(p.release)
	if err := <-p.sent; err != nil {
		t.Fatalf("the server could not send the slow reply on the old connection: %v", err)
	}
	select {
	case r := <-slow:
		if r.err != nil || string(r.body) != "slow reply" {
			t.Fatalf("the slow call: %q, %v; want its reply", r.body, r.err)
		}
	case <-time.After(live):
		t.Fatal("the slow call never ended")
	}
}

// TestDrainedCallSurvivesLostNewConnection: as above, but the new connection is accepted and
// then closed by the peer with the next call unanswered: that call fails with a connection
// error, and the slow call waiting on the old connection must still get its reply there. Before,
// it failed with the new connection's "read: EOF".
func TestDrainedCallSurvivesLostNewConnection(t *testing.T) {
	p := startRestartingPeer(t)
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, p.endpoint())
	ctx := testCtx(t)

	type result struct {
		body []byte
		err  error
	}
	slow := make(chan result, 1)
	if err := sp.AsyncInvokeRaw(ctx, "slow", nil, func(b []byte, err error) { slow <- result{b, err} }); err != nil {
		t.Fatalf("slow call: %v", err)
	}
	if b, err := sp.InvokeRaw(ctx, "move", nil); err != nil || string(b) != "moved" {
		t.Fatalf("move call: %q, %v", b, err)
	}
	_, err := sp.InvokeRaw(ctx, "next", nil)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("a call on the new connection, which the peer closes unanswered: %v; want ErrConnection", err)
	}
	select {
	case r := <-slow:
		t.Fatalf("the slow call, written on the old connection that is still open, ended with %v (%q) when the new connection was lost, before its reply was even sent; want the reply the server sends on the old connection", r.err, r.body)
	case <-time.After(200 * time.Millisecond):
	}
	close(p.release)
	if err := <-p.sent; err != nil {
		t.Fatalf("the server could not send the slow reply on the old connection: %v", err)
	}
	select {
	case r := <-slow:
		if r.err != nil || string(r.body) != "slow reply" {
			t.Fatalf("the slow call: %q, %v; want its reply", r.body, r.err)
		}
	case <-time.After(live):
		t.Fatal("the slow call never ended")
	}
}
