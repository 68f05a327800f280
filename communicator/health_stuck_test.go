package communicator_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// startStuckFirstServer starts a raw TARS peer whose first connection reads every request and
// never answers (a connection whose flow a NAT or load balancer lost, or a peer stuck on it),
// while every later connection answers everything at once (SayHello as the greeter does,
// tars_ping with an empty body).
func startStuckFirstServer(t *testing.T) *rawServer {
	t.Helper()
	endToEnd(t)
	return serveRaw(t, listenLoopback(t), func(n int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			if n == 1 || req.PacketType == codec.PacketOneway {
				return true // the stuck connection: read, never answer
			}
			var out []byte
			if req.FuncName == codec.FuncPing {
				out = replyFrame(req, req.RequestID, nil)
			} else {
				out = helloReply(req, req.RequestID, "fresh")
			}
			_, err := c.Write(out)
			return err == nil
		})
	})
}

// TestStuckConnectionReplaced: one endpoint whose current connection went silently dead (it
// takes bytes, never answers) while a new connection would work. The first call times out and
// the health rules take the endpoint out (frequent-fail-invoke = 1); the first probe ping over
// the dead connection goes unanswered, which replaces the connection (calls waiting on the old
// one keep their deadlines), and the probe over the new one is answered: the endpoint comes back
// and calls succeed. An unanswered probe used to keep the connection (and a probe in flight held
// off the keepalive ping), so no new one was ever dialled and every call timed out forever.
func TestStuckConnectionReplaced(t *testing.T) {
	raw := startStuckFirstServer(t)
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.KeepAliveInterval = 200 * time.Millisecond // even with keep-alive on
		c.Health.TryInterval = 200 * time.Millisecond
	}))
	sp := proxyToAddrs(t, comm, raw.endpoint())
	ctx := testCtx(t)
	opt := servantproxy.WithTimeout(200 * time.Millisecond)

	if _, err := sayHello(ctx, sp, "first", 0, opt); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("first call on the stuck connection: err = %v, want ErrTimeout", err)
	}
	// A call with a long deadline, most likely written to the dead connection before the probe
	// over it goes unanswered: the replacement leaves it to its deadline (ErrTimeout), it does
	// not fail it as a connection error. Should it land on the new connection, it succeeds.
	long := make(chan error, 1)
	go func() {
		_, err := sayHello(ctx, sp, "long", 1, servantproxy.WithTimeout(2*time.Second))
		long <- err
	}()
	var (
		seq     uint64 = 1
		lastErr error
	)
	deadline := time.Now().Add(live)
	for time.Now().Before(deadline) {
		seq++
		_, err := sayHello(ctx, sp, "again", seq, opt)
		if err == nil {
			t.Logf("recovered after %d calls, %d connections accepted", seq, raw.accepts.Load())
			if err := <-long; err != nil && !errors.Is(err, communicator.ErrTimeout) {
				t.Errorf("the call waiting when the connection was replaced: err = %v, want ErrTimeout (or a reply)", err)
			} else {
				t.Logf("the call waiting when the connection was replaced: %v", err)
			}
			return
		}
		if !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("call %d: err = %v, want ErrTimeout until the endpoint is back", seq, err)
		}
		lastErr = err
		time.Sleep(20 * time.Millisecond)
	}
	<-long
	t.Fatalf("no call succeeded within %v of the first timeout (%d calls, last error %v): the endpoint's "+
		"dead connection was never replaced (the peer accepted %d connection(s); a new one answers at once)",
		live, seq, lastErr, raw.accepts.Load())
}
