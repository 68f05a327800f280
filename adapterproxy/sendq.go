package adapterproxy

import "github.com/tarscomm/tarscomm/internal/call"

// sendq is the FIFO of an AdapterProxy's calls that are queued but not yet written: while it
// connects (the connect backlog) and between the routing of a batch and its flush. A call that
// leaves early (its deadline passed, its caller gave up) leaves a hole, in O(1), found through
// the index it keeps (call.Call.QIdx); holes are skipped when writing and reclaimed when the
// queue empties or its front half is consumed, so every operation is O(1) amortized however long
// a connect hangs.
type sendq struct {
	calls []*call.Call // calls[head:] in order; nil where a call left early
	head  int
	live  int // calls in the queue
	bytes int // bytes of their frames: counted against the send-buffer limit
}

// push appends c.
func (q *sendq) push(c *call.Call) {
	c.Unsent = true
	c.QIdx = int32(len(q.calls))
	q.calls = append(q.calls, c)
	q.live++
	q.bytes += len(c.Frame)
}

// remove takes c, which is in the queue, out of it.
func (q *sendq) remove(c *call.Call) {
	q.calls[c.QIdx] = nil
	q.left(c)
}

// left accounts for c's departure from the queue (its slot already cleared or consumed).
func (q *sendq) left(c *call.Call) {
	c.Unsent = false
	q.live--
	q.bytes -= len(c.Frame)
	if q.live == 0 {
		clear(q.calls[q.head:])
		q.calls, q.head = keepCalls(q.calls), 0
	}
}

// keepCallsCap is the largest array of calls a queue or scratch list keeps for reuse once
// emptied (32 KiB): one after a burst of a connect backlog or of a lost connection's calls is
// dropped, not kept for the endpoint's life.
const keepCallsCap = 4096

// keepCalls returns s emptied for reuse, or nil when its array is larger than keepCallsCap.
func keepCalls(s []*call.Call) []*call.Call {
	if cap(s) > keepCallsCap {
		return nil
	}
	return s[:0]
}

// front returns the first call, or nil when the queue is empty.
func (q *sendq) front() *call.Call {
	for q.head < len(q.calls) {
		if c := q.calls[q.head]; c != nil {
			return c
		}
		q.head++
	}
	return nil
}

// pop removes the first call, which front returned.
func (q *sendq) pop() *call.Call {
	c := q.calls[q.head]
	q.calls[q.head] = nil
	q.head++
	q.left(c)
	q.compact()
	return c
}

// compact moves the live part to the front of the array once the consumed front is large and
// at least half of it, renumbering the moved calls: amortized O(1) per pop.
func (q *sendq) compact() {
	if q.head < 1024 || q.head < len(q.calls)/2 {
		return
	}
	n := copy(q.calls, q.calls[q.head:])
	clear(q.calls[n:])
	q.calls, q.head = q.calls[:n], 0
	for i, c := range q.calls {
		if c != nil {
			c.QIdx = int32(i)
		}
	}
}

// drain removes every call and appends it to out, in order.
func (q *sendq) drain(out []*call.Call) []*call.Call {
	for _, c := range q.calls[q.head:] {
		if c != nil {
			c.Unsent = false
			out = append(out, c)
		}
	}
	clear(q.calls)
	q.calls, q.head, q.live, q.bytes = keepCalls(q.calls), 0, 0, 0
	return out
}

// each calls fn for every queued call in order; fn may remove the call it is given.
func (q *sendq) each(fn func(c *call.Call)) {
	for i := q.head; i < len(q.calls); i++ {
		if c := q.calls[i]; c != nil {
			fn(c)
		}
	}
}
