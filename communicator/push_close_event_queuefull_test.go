package communicator_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
)

// udppushEndpointCounts sums the replies and connection losses of the push servant's endpoints.
func udppushEndpointCounts(comm *communicator.Communicator) (replies, losses uint64) {
	for _, e := range comm.Stats().Endpoints {
		if e.Servant == pushServant {
			replies += e.Replies
			losses += e.ConnLosses
		}
	}
	return replies, losses
}

// TestPushCloseEventKeptWhileAsyncQueueFull: the README promises that the push
// callback gets "the opening and closing of the proxy's connections, which tell it when to
// subscribe again" (OnClose: "pushes on it are gone: subscribe again"). The connection that
// carries a subscription closes while the async callback queue is full (asyncqueuecap reached:
// one async worker busy in a callback, one callback waiting). Once the queue has room again the
// client subscribes on a new connection: the first event the callback gets must be the close of
// the old connection, then the connect of the new one. Before, the close event was dropped
// (PushSink.Closed -> carrier -> asyncproc.ReserveEvent failed with ErrQueueFull, and the event
// was thrown away, uncounted and unlogged): an application that resubscribes on OnClose never
// learned that its subscription was gone and silently received no pushes from then on.
// Connection events now take their slot with ReserveNotice, which a full queue does not refuse.
func TestPushCloseEventKeptWhileAsyncQueueFull(t *testing.T) {
	addr, subs := startPusher(t)
	fp, err := faultproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fp.Close() })
	comm := newComm(t, func(c *conf.Config) {
		onePushThread(c) // one net thread, one async worker
		livenessTimeouts(c)
		c.AsyncQueueCap = 1
	})
	sp := pushProxy(t, comm, fp.Addr())
	rec := newPushRecorder()
	sp.SetPushCallback(rec.callback())
	first := subscribe(t, sp, subs)
	if ev := recv(t, rec.events, "connect event"); ev != "connect "+fp.Addr() {
		t.Fatalf("event %q, want connect %s", ev, fp.Addr())
	}
	ctx := testCtx(t)

	// The async worker runs a callback that waits for hold.
	hold := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	t.Cleanup(release) // before the Communicator's Close (cleanups run last-in first-out)
	running := make(chan struct{})
	if err := sp.AsyncInvokeRaw(ctx, "Subscribe", nil, func([]byte, error) {
		close(running)
		<-hold
	}); err != nil {
		t.Fatal(err)
	}
	recv(t, running, "the first async callback running")
	recv(t, subs, "the first async call's subscription")
	// A second async call's callback waits for the worker: the queue holds asyncqueuecap (1).
	second := make(chan error, 1)
	if err := sp.AsyncInvokeRaw(ctx, "Subscribe", nil, func(_ []byte, err error) { second <- err }); err != nil {
		t.Fatal(err)
	}
	recv(t, subs, "the second async call's subscription")
	waitFor(t, "the second reply delivered to the async queue", func() bool {
		r, _ := udppushEndpointCounts(comm)
		return r >= 3
	})

	// The connection carrying the subscription closes (the server, or a middlebox, hangs up).
	if n := fp.Hangup(); n != 1 {
		t.Fatalf("hung up %d connections, want 1", n)
	}
	waitFor(t, "the client to see the connection closed", func() bool {
		_, l := udppushEndpointCounts(comm)
		return l >= 1
	})
	waitFor(t, "the server to see the close", first.Closed)

	// The queue drains.
	release()
	if err := recv(t, second, "the second async callback"); err != nil {
		t.Fatalf("second async call: %v", err)
	}

	// The client subscribes again, on a new connection.
	subscribe(t, sp, subs)
	ev := recv(t, rec.events, "connection event")
	if ev != "close "+fp.Addr() {
		t.Fatalf("first connection event after the hangup: %q; want %q first: the close of the connection that "+
			"carried the subscription was never delivered to OnClose (dropped because the async queue was full "+
			"when it happened), so the application is never told to subscribe again", ev, "close "+fp.Addr())
	}
	if ev := recv(t, rec.events, "connect event"); ev != "connect "+fp.Addr() {
		t.Fatalf("event %q, want connect %s", ev, fp.Addr())
	}
}
