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
//   - A backup request is a copy of its primary's frame, sent to another endpoint: its proxy
//     gives it an id like any call's. Primary and backup never need distinct ids by
//     construction; each is unique on its own connection.
//   - A ping (keepalive or health probe) is the proxy's own call and takes its id from the same
//     counter.
//   - A one-way call gets an id too (servers log it), but it is not tracked: no reply comes.
//
// Ids are unique per AdapterProxy, so per connection, which is all a reply needs: it is matched
// on the connection it arrives on. Drawing them on the loop costs no atomic operation shared by
// callers, and the id is chosen only once the connection is.

// callTable is an AdapterProxy's table of two-way calls waiting for their reply, by request id:
// every call written or queued on the connection and not yet ended. Every touch of it goes
// through these methods. Owned by the loop goroutine.
type callTable struct {
	m       map[int32]*call.Call
	peak    int   // most entries m held since it was last made
	last    int32 // the last id given out
	wrapped bool  // the counter wrapped: an id may still be in use
}

// shrinkAbove is the size beyond which an emptied table is made again: Go maps never give their
// memory back, and a burst must not pin it.
const shrinkAbove = 1024

func newCallTable() callTable { return callTable{m: make(map[int32]*call.Call)} }

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

// next returns a fresh id: positive, and not the id of a call in the table.
func (t *callTable) next() int32 {
	for {
		if t.last == math.MaxInt32 {
			t.last, t.wrapped = 0, true
		}
		t.last++
		if !t.wrapped {
			return t.last
		}
		if _, busy := t.m[t.last]; !busy {
			return t.last
		}
	}
}

// add records c, which assign gave its id, as waiting for its reply.
func (t *callTable) add(c *call.Call) {
	t.m[c.ID] = c
	if n := len(t.m); n > t.peak {
		t.peak = n
	}
}

// take removes and returns the call waiting for the reply to id, or nil.
func (t *callTable) take(id int32) *call.Call {
	c, ok := t.m[id]
	if !ok {
		return nil
	}
	t.remove(c)
	return c
}

// remove forgets c (it ended another way: expired, abandoned).
func (t *callTable) remove(c *call.Call) {
	delete(t.m, c.ID)
	if len(t.m) == 0 && t.peak > shrinkAbove {
		t.m, t.peak = make(map[int32]*call.Call), 0
	}
}

// drain removes every call, appending them to dst.
func (t *callTable) drain(dst []*call.Call) []*call.Call {
	for id, c := range t.m {
		delete(t.m, id)
		dst = append(dst, c)
	}
	if t.peak > shrinkAbove {
		t.m, t.peak = make(map[int32]*call.Call), 0
	}
	return dst
}

// len returns the number of calls waiting.
func (t *callTable) len() int { return len(t.m) }
