package adapterproxy

import (
	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Direct writes: a caller writes its own frame.
//
// When its net thread is idle, a caller routes its call and flushes it itself, on its own
// goroutine (netthread's direct path: Loop.Borrowed reports it). Borrowed, an AdapterProxy
// must not call gnet, whose connection methods belong to the loop goroutine, so Flush becomes
// flushDirect: a lone frame, on a plain TCP connection with nothing of it waiting anywhere
// (gnet's outbound buffer as the loop last saw it, a big writer, a direct write's rest), is
// written to the socket with write(2) (bigwrite.Direct, as the loop's large frames are).
// Everything else is handed to the loop (Resume), which writes it on its next turn as it always
// did. The rest of a frame the socket did not take is kept in tail and written by the loop
// before anything else.

// directMax is the largest frame a caller writes itself: the direct path is for small calls
// at low concurrency, where the loop's wakeup is most of the latency.
const directMax = 64 << 10

// flushDirect is Flush on the direct path (Loop.Borrowed).
func (a *AdapterProxy) flushDirect() {
	c := a.q.front()
	if c == nil {
		a.dirty = false
		return
	}
	if !a.directOK(c) {
		a.handOff()
		return
	}
	n, _ := bigwrite.Direct(a.fd, c.Frame)
	if n <= 0 {
		a.handOff() // EAGAIN, or an error the loop's write meets again and handles
		return
	}
	a.dirty = false
	a.handedFront(c)
	if n < len(c.Frame) {
		// The rest is copied: the call may end (its deadline) and be recycled before the loop
		// writes it.
		a.tail = append(a.tail[:0], c.Frame[n:]...)
		a.handOff()
	}
	a.written1(c)
}

// directOK reports whether c, the queue's first call, may be written on the direct path (a
// call whose deadline has passed is left to the loop's Flush, which ends it unsent).
func (a *AdapterProxy) directOK(c *call.Call) bool {
	return a.state == stateConnected && a.fd >= 0 && !a.udp && a.big == nil &&
		a.gnetQueued == 0 && len(a.tail) == 0 && a.q.live == 1 &&
		len(c.Frame) <= directMax && !c.Abandoned() && (c.Deadline == 0 || c.Deadline > a.loop.Now())
}

// handOff leaves the Flush to the loop, on its next turn.
func (a *AdapterProxy) handOff() {
	a.dirty = true
	a.loop.Resume(a)
}

// writeTail hands gnet the rest of a frame that a direct write left, before anything else is
// written. It reports false when the write failed (the connection is closed). Loop goroutine
// only.
func (a *AdapterProxy) writeTail() bool {
	if len(a.tail) == 0 || a.state != stateConnected {
		return true
	}
	conn, tail := a.conn, a.tail
	a.tail = a.tail[:0] // gnet copies what the socket does not take
	if _, err := conn.Write(tail); err != nil {
		if a.conn == conn {
			a.closed(err)
		}
		return false
	}
	a.gnetQueued = conn.OutboundBuffered()
	if cap(a.tail) > directMax {
		a.tail = nil
	}
	return true
}

// outBuffered is the connection's bytes waiting in gnet's outbound buffer or in tail. Borrowed,
// gnet's count is the one the loop saw last (only the loop adds to the buffer, so it can only
// be lower now).
func (a *AdapterProxy) outBuffered() int {
	if a.loop.Borrowed() {
		return a.gnetQueued + len(a.tail)
	}
	a.gnetQueued = a.conn.OutboundBuffered()
	return a.gnetQueued + len(a.tail)
}

// attachFD notes the socket of connection c for direct writes (a plain TCP connection only).
func (a *AdapterProxy) attachFD(c any) {
	a.fd, a.gnetQueued, a.tail, a.outLeft = -1, 0, a.tail[:0], 0
	if f, ok := c.(fder); ok && !a.udp {
		a.fd = f.Fd()
	}
}
