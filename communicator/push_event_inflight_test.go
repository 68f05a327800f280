package communicator_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestConnectEventTakesNoInflightSlot: async-inflight-limit "bounds the async calls
// not yet finished: sent and awaiting their reply, waiting for an async goroutine, or running
// their callback" (conf.Config.AsyncInFlightLimit; AsyncInvoke: "ErrQueueFull ... while
// async-inflight-limit calls are unfinished"). A connection event (OnConnect, the usual place to
// subscribe again to a server's pushes, with a sync call) is no async call: while one runs, with
// no async call unfinished at all, an AsyncInvoke under async-inflight-limit = 1 must be
// accepted. Before, the event's carrier took its slot with ReserveEvent, which skipped the
// limit's check but still counted in the same number that Reserve checks: the application's only
// async call was refused with ErrQueueFull for as long as the event's callback ran (and, the same
// way, while pushes waited for OnPush). Events are counted apart now (asyncproc's events).
func TestConnectEventTakesNoInflightSlot(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread, c.AsyncThread, c.KeepAliveInterval = 1, 2, 0 // a worker left for the call's callback
		c.AsyncInFlightLimit = 1
	})
	sp := proxyTo(t, comm, g)

	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // registered after newComm's: runs before the Communicator closes
	sp.SetPushCallback(&servantproxy.PushCallback{OnConnect: func(string) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release // resubscribing, say: a sync call to the server
	}})

	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "open", 1); err != nil { // opens the connection
		t.Fatalf("sync call: %v", err)
	}
	recv(t, entered, "the OnConnect callback")

	if n := sp.Inflight(); n != 0 {
		t.Fatalf("Inflight() = %d before the async call, want 0", n)
	}
	done, err := asyncHello(t, ctx, sp, "async", 2)
	unblock()
	if err != nil {
		t.Fatalf("AsyncInvoke with no async call unfinished, under async-inflight-limit = 1, while an OnConnect "+
			"callback runs: %v (ErrQueueFull: %v); want it accepted: a connection event is no async call",
			err, errors.Is(err, communicator.ErrQueueFull))
	}
	if err := waitErr(done, live, "the async call's callback"); err != nil {
		t.Fatalf("async call: %v", err)
	}
}
