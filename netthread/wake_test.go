package netthread

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestWakeNeverBlocks: wakeups can pile up in the anchor socket between two of the loop's polls
// (hand-backs clear the notified flag without reading it). With the loop held on a task, ten
// thousand wakeups (a one-byte write each: a few hundred fill a Unix socket's buffer) must all
// return: a full socket means the loop has bytes to read, not a caller to block. They blocked
// while the writing end of the socket pair was a blocking socket. Once released, the loop reads
// the bytes and the thread keeps working.
func TestWakeNeverBlocks(t *testing.T) {
	h := newEcho(t)
	th := h.th
	entered, release := make(chan struct{}), make(chan struct{})
	th.post(func() {
		close(entered)
		<-release
	})
	<-entered
	const wakes = 10000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range wakes {
			th.wake()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		close(release)
		<-done
		t.Fatalf("%d wakeups of a loop that cannot read them did not return within 10 s: a wakeup blocked", wakes)
	}
	close(release)
	if th.broken.Load() {
		t.Fatal("the thread counts itself broken after a full wakeup socket")
	}
	c, err := h.submit([]byte("after"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if c.Err != nil || string(c.Body) != "after" {
		t.Fatalf("a call after the wakeups: err %v, body %q", c.Err, c.Body)
	}
	call.Put(c)
}
