package netthread

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestWakeFailureFailsHeldCalls: when a write to the anchor socket fails and the socket stays
// open (ENOBUFS, say), the loop can no longer be woken for sweeps, so a call waiting for a reply
// that will not come, with an hour to its deadline, must not wait for either: the thread fails
// it with errBroken, and refuses the next call. The call goes to a real server over loopback whose
// handler holds it until the test ends.
func TestWakeFailureFailsHeldCalls(t *testing.T) {
	h := newHeld(t)
	th := h.th
	submit := func() (*call.Call, error) { return h.submit([]byte("x"), time.Hour) }
	held, err := submit()
	if err != nil {
		t.Fatal(err)
	}
	h.arrived(t) // written and at the server: only a reply or a sweep can end it now

	th.wakeFailed(syscall.ENOBUFS)

	select {
	case <-held.Done():
		if !errors.Is(held.Err, errBroken) {
			t.Errorf("the held call ended with %v, want errBroken", held.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held call was not failed after the wakeup socket failed")
	}
	call.Put(held)
	c, err := submit()
	if !errors.Is(err, errBroken) {
		t.Errorf("Submit after the wakeup failed: %v, want errBroken", err)
	}
	call.Put(c)
}
