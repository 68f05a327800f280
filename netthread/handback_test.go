package netthread

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/closetest"
)

// TestHandBack: callers that make their next call as soon as the last one ends (sync callers
// in a loop) submit while the loop holds the wakeup flag through turns of replies, and every
// call ends with its own reply, none stranded by a flag held with no drain to follow (the
// ticker cannot wake a loop whose flag is stuck: the callers would hang). Eight callers, 300
// calls each, on one connection to a real server.
func TestHandBack(t *testing.T) {
	h := newEcho(t)
	const callers, rounds = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				body := fmt.Appendf(nil, "caller %d call %d", i, r)
				c, err := h.submit(body, 20*time.Second)
				if err != nil {
					errs <- err
					return
				}
				<-c.Done() // the deadline ends it if nothing else does
				if c.Err != nil || c.Ret != 0 || !bytes.Equal(c.Body, body) {
					errs <- fmt.Errorf("%s: err %v ret %d body %q", body, c.Err, c.Ret, c.Body)
					call.Put(c)
					return
				}
				call.Put(c)
			}
		}()
	}
	waitAll(t, &wg, "the callers")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := h.th.Snapshot(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nt := s.Threads[0]
	if nt.Requests != callers*rounds {
		t.Errorf("%d requests routed, want %d", nt.Requests, callers*rounds)
	}
	t.Logf("%d calls: %d wakeups, %d hand-backs, %d batches, %d direct", nt.Requests, nt.Wakeups, nt.HandBacks, nt.Batches, nt.Direct)
}

// TestHandBackDrainsWhatWasSubmitted: a call submitted while the loop holds the wakeup flag for a
// turn (as OnTraffic does) is queued without a wakeup and leaves with the drain that ends the
// turn: the thread counts one hand-back, and the call ends with its reply.
func TestHandBackDrainsWhatWasSubmitted(t *testing.T) {
	h := newEcho(t)
	warm, err := h.submit([]byte("warm"), 20*time.Second) // the connection is up after this
	if err != nil {
		t.Fatal(err)
	}
	<-warm.Done()
	if warm.Err != nil {
		t.Fatal(warm.Err)
	}
	call.Put(warm)
	before, err := h.th.Snapshot(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}

	body := []byte("submitted meanwhile")
	type turn struct {
		c      *call.Call
		err    error
		held   bool
		queued int64
	}
	var got turn
	deadline := time.Now().Add(20 * time.Second)
	for !got.held && got.err == nil && time.Now().Before(deadline) {
		ran := make(chan turn, 1)
		h.th.Execute(func() { // on the loop, holding the loop side, as a turn of traffic
			th := h.th
			if !th.notified.CompareAndSwap(false, true) {
				ran <- turn{} // a wakeup is on its way (the ticker's): try another turn
				return
			}
			var tr turn
			tr.held = true
			done := make(chan struct{})
			go func() { // Submit needs nothing of the loop: it queues the call
				tr.c, tr.err = h.submit(body, 20*time.Second)
				close(done)
			}()
			<-done
			tr.queued = th.queued.Load()
			th.handBack()
			ran <- tr
		})
		select {
		case got = <-ran:
		case <-time.After(20 * time.Second):
			t.Fatalf("the loop did not run the turn\n%s", closetest.Stacks())
		}
	}
	if got.err != nil || !got.held {
		t.Fatalf("no turn with the flag held (submit error %v)", got.err)
	}
	if got.queued != 1 {
		t.Errorf("%d calls queued while the flag was held, want 1", got.queued)
	}
	<-got.c.Done() // the deadline ends it if nothing else does
	if got.c.Err != nil || !bytes.Equal(got.c.Body, body) {
		t.Fatalf("the call: err %v body %q", got.c.Err, got.c.Body)
	}
	call.Put(got.c)
	after, err := h.th.Snapshot(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Threads[0].HandBacks - before.Threads[0].HandBacks; d != 1 {
		t.Errorf("%d hand-backs counted, want 1", d)
	}
}
