package communicator_test

import (
	"bytes"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// hsPushFrame is a server push (request id 0, function Tick) carrying body.
func hsPushFrame(body []byte) []byte {
	return codec.AppendResponse(nil, &codec.ResponsePacket{
		Version:    codec.VersionTars,
		PacketType: codec.PacketNormal,
		RequestID:  codec.PushRequestID,
		Status:     map[string]string{"TARS_FUNC": "Tick"},
		Buffer:     body,
	})
}

// hsPushCounts sums the push counters of every endpoint.
func hsPushCounts(comm *communicator.Communicator) (pushes, dropped uint64) {
	for _, e := range comm.Stats().Endpoints {
		pushes += e.Pushes
		dropped += e.PushesDropped
	}
	return pushes, dropped
}

// pushingServer starts a raw TARS peer that answers each request (the subscription) with an
// empty reply and then runs push on the connection; push's result says whether to read on.
func pushingServer(t *testing.T, push func(c net.Conn) bool) net.Listener {
	t.Helper()
	ln := listenLoopback(t)
	serveRaw(t, ln, func(_ int64, c net.Conn) {
		defer c.Close()
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			if _, err := c.Write(replyFrame(req, req.RequestID, nil)); err != nil {
				return false
			}
			return push(c)
		})
	})
	return ln
}

// hsInfoComm is newComm with an info-level logger: the client logs every dropped or received
// push at debug level, and a flood of them into t.Log would measure the test's logger, not the
// client.
func hsInfoComm(t *testing.T) *communicator.Communicator {
	t.Helper()
	return newCommWith(t, faultConf(nil), communicator.WithLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))))
}

// TestPushFloodLeavesCallsAlone: a server floods its subscribers with small pushes, on a proxy
// whose push callback takes 1 ms per push; an async call to another, healthy servant of the same
// Communicator is accepted and called back with its reply, and the pushes beyond what the proxy
// holds for its callback are dropped and counted. The pushes used to fill the shared async queue
// (asyncqueuecap, 100000): the healthy servant's AsyncInvoke failed with ErrQueueFull, or its
// callback ran after the ten seconds of pushes queued ahead of it.
func TestPushFloodLeavesCallsAlone(t *testing.T) {
	push := hsPushFrame([]byte("tick"))
	var burst []byte
	for range 200 {
		burst = append(burst, push...)
	}
	stop := make(chan struct{})
	ln := pushingServer(t, func(c net.Conn) bool { // push until the test ends
		for {
			select {
			case <-stop:
				return false
			default:
			}
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(burst); err != nil {
				return false
			}
			time.Sleep(time.Millisecond)
		}
	})
	g := startGreeter(t, "victim", serverOpt{})
	comm := hsInfoComm(t)
	pusher := proxyToAddrs(t, comm, tcpEndpoint(ln.Addr().String()))
	quit := make(chan struct{})
	var handled atomic.Int64
	pusher.SetPushCallback(&servantproxy.PushCallback{OnPush: func(*servantproxy.Push) {
		handled.Add(1)
		select { // a push costs its consumer 1 ms of work
		case <-quit:
		case <-time.After(time.Millisecond):
		}
	}})
	// Registered after newComm's Cleanup, so run before it: Close then has no slow callbacks
	// left to run.
	t.Cleanup(func() {
		close(stop)
		close(quit)
	})
	victim := proxyTo(t, comm, g)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, victim, "warm", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := pusher.InvokeRaw(ctx, "Subscribe", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the flood runs

	const deadline = time.Second
	start := time.Now()
	done, err := asyncHello(t, ctx, victim, "victim", 1, servantproxy.WithTimeout(deadline))
	if err != nil {
		pushes, dropped := hsPushCounts(comm)
		t.Fatalf("AsyncInvoke to a healthy servant refused during another servant's push flood: %v (pushes %d, dropped %d)", err, pushes, dropped)
	}
	err = waitErr(done, live, "the victim's async callback")
	pushes, dropped := hsPushCounts(comm)
	t.Logf("called back after %v; pushes %d, dropped %d, push callbacks run %d",
		time.Since(start).Round(time.Millisecond), pushes, dropped, handled.Load())
	if err != nil {
		t.Fatalf("the async call to a healthy servant failed: %v", err)
	}
	if dropped == 0 {
		t.Fatalf("%d pushes for a callback that takes 1 ms each, none dropped: the pushes waiting for it are not bounded", pushes)
	}
}

// TestPushBacklogBounded: a server pushes 1 MiB packets to a proxy whose push callback is held:
// the proxy keeps at most MaxQueuedPushBytes of them for the callback and drops (and counts) the
// others, and once the callback runs again it gets every push kept. Every push used to be kept
// until its callback ran, up to asyncqueuecap (100000) pushes of up to max-packet-size each: a
// hostile server could make the client run out of memory (400 pushes of 1 MiB held 389 MiB).
func TestPushBacklogBounded(t *testing.T) {
	const (
		pushSize = 1 << 20
		pushes   = 100
		kept     = servantproxy.MaxQueuedPushBytes / pushSize
	)
	frame := hsPushFrame(bytes.Repeat([]byte{'p'}, pushSize))
	ln := pushingServer(t, func(c net.Conn) bool {
		for range pushes {
			if _, err := c.Write(frame); err != nil {
				return false
			}
		}
		return true
	})
	comm := hsInfoComm(t)
	sp := proxyToAddrs(t, comm, tcpEndpoint(ln.Addr().String()))
	gate := make(chan struct{})
	var delivered atomic.Int64
	sp.SetPushCallback(&servantproxy.PushCallback{OnPush: func(p *servantproxy.Push) {
		<-gate
		if len(p.Body) == pushSize {
			delivered.Add(1)
		}
	}})
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release) // runs before newComm's Close
	if _, err := sp.InvokeRaw(testCtx(t), "Subscribe", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, live, "every push to be read", func() bool {
		n, _ := hsPushCounts(comm)
		return n >= pushes
	})
	n, dropped := hsPushCounts(comm)
	if n-dropped > kept {
		t.Fatalf("%d pushes of 1 MiB read for a held callback, %d dropped: %d kept, want at most %d (MaxQueuedPushBytes)", n, dropped, n-dropped, kept)
	}
	release()
	eventually(t, live, "the kept pushes to be delivered", func() bool { return uint64(delivered.Load()) == n-dropped })
}
