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
// in a loop) are handed the loop back after the replies' turn: their calls are drained in a
// hand-back (counted), and every call ends with its own reply, none stranded by a drain that
// no wakeup announced. Eight callers, 300 calls each, on one connection to a real server.
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
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the callers did not finish\n%s", closetest.Stacks())
	}
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
	if nt.HandBacks == 0 {
		t.Errorf("no hand-back in %d calls (%d wakeups, %d batches)", nt.Requests, nt.Wakeups, nt.Batches)
	}
	t.Logf("%d calls: %d wakeups, %d hand-backs, %d batches, %d direct", nt.Requests, nt.Wakeups, nt.HandBacks, nt.Batches, nt.Direct)
}
