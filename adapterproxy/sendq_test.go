package adapterproxy

import (
	"testing"

	"github.com/tarscomm/tarscomm/internal/call"
)

// A queue emptied after a burst (a connect backlog drained into the new connection, or failed
// with the connection: drain) drops an array larger than keepCallsCap and keeps a small one.
// Before, drain kept the burst's array for the endpoint's life (a review of what a long-lived
// Communicator keeps); left already dropped it.
func TestSendqDrainDropsBurstArray(t *testing.T) {
	var q sendq
	for range 3 * keepCallsCap {
		q.push(&call.Call{Frame: make([]byte, 8)})
	}
	out := q.drain(nil)
	if len(out) != 3*keepCallsCap || q.live != 0 || q.bytes != 0 {
		t.Fatalf("drained %d calls, %d live, %d bytes left; want %d, 0, 0", len(out), q.live, q.bytes, 3*keepCallsCap)
	}
	if cap(q.calls) != 0 {
		t.Fatalf("an array of %d calls kept after the burst, want none", cap(q.calls))
	}
	for range 10 {
		q.push(&call.Call{Frame: make([]byte, 8)})
	}
	small := cap(q.calls)
	if out = q.drain(out[:0]); len(out) != 10 || cap(q.calls) != small {
		t.Fatalf("drained %d calls and kept an array of %d; want 10 and %d", len(out), cap(q.calls), small)
	}
}
