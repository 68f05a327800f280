package adapterproxy

import (
	"math"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Request ids. This is the one place that says who gives a request its id, and when.
//
// The AdapterProxy does, on the loop, when Send queues the call on its connection: the id is the
// next of the proxy's own counter (callTable.assign), unique among the calls this proxy tracks,
// never 0 (the id of a server push, codec.PushRequestID) and never negative. The frame was encoded
// on the caller's goroutine with codec.RequestIDUnassigned, which the encoder writes as a 4-byte
// int32, and Send writes the id over it in place (codec.SetRequestID): four bytes, no
// re-encoding, and the loop still marshals nothing.
//
//   - A call retried on another endpoint (it failed before any byte of it was written) gets a
//     new id from that endpoint's proxy, written over the old one in the same way.
//   - A backup request is a byte copy of its primary's frame, sent to another endpoint: its
//     proxy gives it an id like any call's (no decode and re-encode). Each of the pair is
//     matched on its own connection; two calls on one connection never share an id.
//   - A ping (keepalive or health probe) is the proxy's own call and takes its id from the same
//     counter.
//   - A one-way call gets an id too (the field is in every request), but it is not tracked: no
//     reply comes.
//
// Ids are unique among the calls an AdapterProxy tracks, so per connection, which is all a reply
// needs: it is matched on the connection it arrives on. Drawing them on the loop costs no atomic
// operation shared by callers, and the id is chosen only once the connection is.

// callTable is an AdapterProxy's table of two-way calls waiting for their reply, by request id:
// every call written or queued on the connection and not yet ended. Every touch of it goes
// through these methods. Owned by the loop goroutine.
//
// It is an array of slots indexed by id modulo its size (a power of two), not a map: since the
// table chooses the ids, it skips an id whose slot is taken, so a slot holds one call and a
// lookup is one index and one comparison of the full id (a reply for a call that ended finds an
// empty slot, or another call with another id). Ids still come from a counter that wraps only
// after 2^31, so an id is reused that rarely, as with a map. The array doubles when half full; a
// large one the connection's periodic chores (trim) find empty, or at most a sixteenth full, is
// made small again.
type callTable struct {
	slots []*call.Call // len is a power of two; slots[id & (len-1)] holds the call with that id
	n     int          // calls in slots
	last  int32        // the last id given out
	wait  int          // chores trim skips after a rebuild found no smaller size (trimWait)
}

// Sizes of the slot array: what a new table holds, and the size beyond which trim makes an empty
// table again (a burst must not pin its memory).
const (
	minSlots    = 16
	shrinkAbove = 1024
)

func newCallTable() callTable { return callTable{slots: make([]*call.Call, minSlots)} }

// assign gives c the next request id and writes it into c's frame. It reports false when the
// frame has no room for an id written in place (it was not encoded with
// codec.RequestIDUnassigned or an id outside the int16 range).
func (t *callTable) assign(c *call.Call) bool {
	id := t.next()
	if !codec.SetRequestID(c.Frame, id) {
		return false
	}
	c.ID = id
	return true
}

// next returns a fresh id: positive, not codec.RequestIDAuth (the auth request's, answered on
// the same connection), and one whose slot is free, so not the id of a call in the table. The
// table is at most half full when this runs, so the search is short.
func (t *callTable) next() int32 {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := int32(len(t.slots) - 1)
	for {
		if t.last == math.MaxInt32 {
			t.last = 0
		}
		t.last++
		if t.slots[t.last&mask] == nil && t.last != codec.RequestIDAuth {
			return t.last
		}
	}
}

// grow doubles the slot array. Ids distinct modulo the old size are distinct modulo the new one.
func (t *callTable) grow() {
	slots := make([]*call.Call, 2*len(t.slots))
	mask := int32(len(slots) - 1)
	for _, c := range t.slots {
		if c != nil {
			slots[c.ID&mask] = c
		}
	}
	t.slots = slots
}

// add records c, which assign gave its id, as waiting for its reply.
func (t *callTable) add(c *call.Call) {
	t.slots[c.ID&int32(len(t.slots)-1)] = c
	t.n++
}

// take removes and returns the call waiting for the reply to id, or nil. A call still in the
// send queue (Unsent) is not waiting for a reply yet: ids are sequential, so a peer can name one
// it was never sent, and such a reply is one for an unknown id (taking the call would complete
// it while the queue still holds it, and write the frame of a recycled call later).
func (t *callTable) take(id int32) *call.Call {
	i := id & int32(len(t.slots)-1)
	c := t.slots[i]
	if c == nil || c.ID != id || c.Unsent {
		return nil
	}
	t.slots[i] = nil
	t.n--
	return c
}

// has reports whether a call with request id is in the table.
func (t *callTable) has(id int32) bool {
	c := t.slots[id&int32(len(t.slots)-1)]
	return c != nil && c.ID == id
}

// holds reports whether the table holds c with request id id (c is still waiting for that reply).
// c may have ended and been recycled by another goroutine: its fields are read only once the
// table is seen to hold it.
func (t *callTable) holds(c *call.Call, id int32) bool {
	return t.slots[id&int32(len(t.slots)-1)] == c && c.ID == id
}

// each calls f for every call in the table.
func (t *callTable) each(f func(*call.Call)) {
	if t.n == 0 {
		return
	}
	for _, c := range t.slots {
		if c != nil {
			f(c)
		}
	}
}

// remove forgets c (it ended another way: expired, abandoned).
func (t *callTable) remove(c *call.Call) {
	i := c.ID & int32(len(t.slots)-1)
	if t.slots[i] != c {
		return
	}
	t.slots[i] = nil
	t.n--
}

// trim makes a large table small again once it holds far fewer calls than it has room for:
// an empty one above shrinkAbove goes back to minSlots, and one above shrinkAbove that is at most
// a sixteenth full is rebuilt at the smallest size, from shrinkAbove up, at which the calls it
// holds still take a slot each (their ids are distinct modulo the old size, not always modulo a
// smaller one); when none is smaller than the table, trim leaves it for trimWait chores, rather
// than allocating and dropping those arrays at every one while the same calls stay. So a
// connection that goes on with a few calls in flight after a burst does not keep the burst's
// array (2^19 slots, 4 MiB, after 150,000 pending calls) for as long as its load never pauses.
// It runs with the connection's chores, not when the table empties: a load that empties the
// table between bursts would otherwise make it again and grow it back for every burst (26 B more
// per async call in BenchmarkAsyncCall).
func (t *callTable) trim() {
	switch {
	case len(t.slots) <= shrinkAbove || 16*t.n > len(t.slots):
	case t.n == 0:
		t.slots = make([]*call.Call, minSlots)
	case t.wait > 0:
		t.wait--
	default:
		size := shrinkAbove
		for size < 8*t.n {
			size *= 2
		}
		for ; size < len(t.slots); size *= 2 {
			if t.rebuild(size) {
				return
			}
		}
		t.wait = trimWait
	}
}

// trimWait is how many chores (100 ms each) trim leaves a table alone after finding no smaller
// size for the calls it holds: a few long calls whose ids share a slot at every smaller size.
const trimWait = 50

// rebuild moves the calls to a slot array of size (a power of two), if each still takes a slot
// of its own there; it reports whether it did.
func (t *callTable) rebuild(size int) bool {
	slots := make([]*call.Call, size)
	mask := int32(size - 1)
	for _, c := range t.slots {
		if c == nil {
			continue
		}
		if slots[c.ID&mask] != nil {
			return false
		}
		slots[c.ID&mask] = c
	}
	t.slots = slots
	return true
}

// drain removes every call, appending them to dst.
func (t *callTable) drain(dst []*call.Call) []*call.Call {
	if t.n == 0 {
		return dst
	}
	for i, c := range t.slots {
		if c != nil {
			dst = append(dst, c)
			t.slots[i] = nil
		}
	}
	t.n = 0
	return dst
}

// len returns the number of calls waiting.
func (t *callTable) len() int { return t.n }
