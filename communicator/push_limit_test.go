package communicator_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
)

// reviewPushCounts sums the push counters of the push servant's endpoints.
func reviewPushCounts(comm *communicator.Communicator) (pushes, dropped uint64) {
	for _, e := range comm.Stats().Endpoints {
		if e.Servant == pushServant {
			pushes += e.Pushes
			dropped += e.PushesDropped
		}
	}
	return pushes, dropped
}

// TestPushNotDroppedByAsyncInflightLimit: async-inflight-limit bounds unfinished async calls; a
// push is dropped only without a callback or with the async queue full. While the application
// has that many async calls waiting for their replies (the callback queue empty), pushes and
// connection events are delivered: they took their slot with Reserve, which counts the limit,
// and were all dropped.
func TestPushNotDroppedByAsyncInflightLimit(t *testing.T) {
	addr, subs := startPusher(t)
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "slow", serverOpt{block: true, seen: seen})
	comm := newComm(t, func(c *conf.Config) {
		onePushThread(c)
		livenessTimeouts(c)
		c.AsyncInFlightLimit = 1
	})
	sp := pushProxy(t, comm, addr)
	rec := newPushRecorder()
	sp.SetPushCallback(rec.callback())
	pu := subscribe(t, sp, subs)
	recv(t, rec.events, "connect event")

	// One async call to another servant, waiting for its reply: the one async call allowed.
	slow := proxyTo(t, comm, g)
	done, err := asyncHello(t, testCtx(t), slow, "held", 1)
	if err != nil {
		t.Fatal(err)
	}
	recv(t, seen, "the async call at the server")

	if err := pu.Push("Tick", []byte("1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the push to arrive", func() bool { p, _ := reviewPushCounts(comm); return p == 1 })
	_, dropped := reviewPushCounts(comm)
	close(g.release)
	if err := recv(t, done, "the async call's callback"); err != nil {
		t.Fatalf("async call: %v", err)
	}
	if dropped != 0 {
		t.Fatalf("the push was dropped (PushesDropped = %d) although a callback is set and no callback waits for a worker: "+
			"one async call in flight under async-inflight-limit = 1 refuses the push's carrier", dropped)
	}
	if p := recv(t, rec.pushes, "push"); string(p.Body) != "1" {
		t.Fatalf("push %q, want 1", p.Body)
	}
}
