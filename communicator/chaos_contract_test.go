package communicator_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestSwallowedRefusalReturned: an async or future call refused before it was queued (here
// max-inflight refuses it with ErrOverload) under a "fail-open" interceptor that returns nil
// instead of next's error: AsyncInvoke returns the refusal (no callback will run, as its contract
// says of an error), and the future completes with it. AsyncInvoke used to return the
// interceptor's nil for a call never sent, and no callback ever ran: the future's Get hung.
func TestSwallowedRefusalReturned(t *testing.T) {
	g := startFGreeter(t, "a")
	g.delay.Store(int64(500 * time.Millisecond)) // holds the one max-inflight slot
	failOpen := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		if err := next(ctx, info); err != nil {
			t.Logf("interceptor saw %s fail: %v (returns nil: fail-open)", info.Function, err)
		}
		return nil
	}
	comm := newCommWith(t, func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {MaxInflight: 1}}
	}, communicator.WithInterceptor(failOpen))
	sp := proxyToAddrs(t, comm, g.endpoint())
	ctx := testCtx(t)

	// Take the only slot with a slow call.
	first := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "slow"}, new(hellopb.HelloReply), func(err error) { first <- err }); err != nil {
		t.Fatal(err)
	}
	// This one is refused (ErrOverload) before it is queued; the interceptor swallows that.
	cb := make(chan error, 1)
	err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "refused"}, new(hellopb.HelloReply), func(err error) { cb <- err })
	f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "refused-future"}, new(hellopb.HelloReply))
	<-first
	if !errors.Is(err, communicator.ErrOverload) {
		t.Errorf("AsyncInvoke of a call max-inflight refused, under an interceptor returning nil: err = %v, want ErrOverload", err)
	}
	select {
	case cerr := <-cb:
		t.Errorf("the refused call's callback ran (%v) though AsyncInvoke returned an error", cerr)
	case <-time.After(100 * time.Millisecond):
	}
	gctx, cancel := context.WithTimeout(ctx, live)
	defer cancel()
	if _, ferr := f.Get(gctx); !errors.Is(ferr, communicator.ErrOverload) {
		t.Errorf("FutureInvoke of a call max-inflight refused: Get = %v, want ErrOverload", ferr)
	}
}

// TestPushesBeforeCallbackClearedDelivered: pushes the proxy accepted while a callback was set
// and that still wait for the async worker when SetPushCallback(nil) runs go to the callback that
// accepted them: every push that arrived is delivered or counted as dropped. The worker used to
// look the callback up again and skip the push when it was now nil: neither delivered, nor
// logged, nor counted.
func TestPushesBeforeCallbackClearedDelivered(t *testing.T) {
	addr, subs := startPusher(t)
	comm := newComm(t, onePushThread) // one async worker
	sp := pushProxy(t, comm, addr)
	gate := make(chan struct{})
	got := make(chan string, 64)
	sp.SetPushCallback(&servantproxy.PushCallback{OnPush: func(p *servantproxy.Push) {
		if string(p.Body) == "0" {
			<-gate // the worker is busy: the next pushes wait in the queue
		}
		got <- string(p.Body)
	}})
	pu := subscribe(t, sp, subs)
	const n = 10
	for i := range n {
		if err := pu.Push("Tick", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the client has read all n pushes (they are queued behind push 0).
	waitFor(t, "the pushes to arrive", func() bool { return pushStats(comm).pushes == n })
	sp.SetPushCallback(nil)
	close(gate)
	var delivered int
	deadline := time.Now().Add(live)
	for {
		delivered = len(got)
		if s := pushStats(comm); uint64(delivered)+s.dropped == s.pushes || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("delivered %d stats %+v", delivered, pushStats(comm))
	s := pushStats(comm)
	if uint64(delivered)+s.dropped != s.pushes {
		t.Errorf("pushes: %d arrived (Stats.Pushes), %d delivered to the callback, %d counted dropped: %d lost without trace",
			s.pushes, delivered, s.dropped, s.pushes-uint64(delivered)-s.dropped)
	}
}

type pushCounts struct{ pushes, dropped uint64 }

func pushStats(comm *communicator.Communicator) pushCounts {
	var c pushCounts
	for _, e := range comm.Stats().Endpoints {
		if e.Servant == pushServant {
			c.pushes += e.Pushes
			c.dropped += e.PushesDropped
		}
	}
	return c
}
