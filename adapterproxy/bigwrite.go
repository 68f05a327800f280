package adapterproxy

import (
	"context"
	"fmt"

	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/bufpool"
	"github.com/tarscomm/tarscomm/internal/call"
)

// fder is implemented by connections with a socket of their own (gnet.Conn).
type fder interface{ Fd() int }

// writeBig writes c, the queue's first call, whose frame is large, directly to the socket. It
// reports false when it did nothing (gnet's outbound buffer is not empty, or there is no socket
// to write to): the caller writes c through gnet as any call. Otherwise c has left the queue:
// written whole, or written in part with the rest handed to a writer goroutine (the connection
// then writes nothing else until bigDone, or until it closes: see stopBig). Must be called on
// the loop goroutine.
func (a *AdapterProxy) writeBig(c *call.Call) bool {
	conn := a.conn
	f, ok := conn.(fder)
	if !ok || conn.OutboundBuffered() > 0 {
		return false
	}
	fd := f.Fd()
	if fd < 0 {
		return false
	}
	n, ok := bigwrite.Direct(fd, c.Frame)
	if !ok {
		return false // gnet's write meets the same error and closes the connection
	}
	a.handedFront(c)
	if n == len(c.Frame) {
		a.written1(c)
		return true
	}
	// The call is written in part: it can no longer be retried elsewhere, and its frame now
	// belongs to the writer (the call may end, and be recycled, before the writer is done).
	buf := c.Frame
	c.Frame = nil
	a.written1(c)
	w, err := bigwrite.Start(fd, buf, n) // counted against the send-buffer limit through bigLeft
	if err != nil {
		_, _ = conn.Write(buf[n:]) // gnet copies the rest; on error it closes the connection
		bufpool.Put(buf)
		// Whatever gnet now holds must be seen before a direct write (direct.go), which
		// would otherwise put its frame on the wire in the middle of this one.
		a.gnetQueued = conn.OutboundBuffered()
		return true
	}
	a.big = w
	a.loop.Go(func(ctx context.Context) {
		err := w.Run(ctx)
		a.loop.Post(func() { a.bigDone(w, conn, err) })
	})
	return true
}

// handedFront takes c, the queue's first call, out of the queue: its frame has gone to the
// socket, or in part to the socket and the rest to a writer that finishes it.
func (a *AdapterProxy) handedFront(c *call.Call) {
	a.lastIO = a.loop.Now()
	a.stats.Writes++
	a.stats.BytesOut += uint64(len(c.Frame))
	a.handed += int64(len(c.Frame))
	a.q.front()
	a.q.pop()
}

// stopBig stops the writer of the connection being given up, if any: the next connection
// writes at once, without waiting for a writer that may never finish. Must be called on the
// loop goroutine when the connection leaves (closed, detach).
func (a *AdapterProxy) stopBig() {
	if a.big != nil {
		a.big.Stop()
		a.big = nil
	}
}

// bigLeft returns the bytes the writer has yet to write, 0 without one.
func (a *AdapterProxy) bigLeft() int64 {
	if a.big == nil {
		return 0
	}
	return a.big.Left()
}

// written1 is told that c's whole frame has left it: written to the socket, or the rest copied
// (gnet's outbound buffer, a TLS record, a direct write's tail) or handed to a writer. A one-way
// call completes; a two-way call gives a large frame back (call.FrameSent) and waits for its
// reply.
func (a *AdapterProxy) written1(c *call.Call) {
	if c.Oneway {
		a.loop.Wheel().Remove(c)
		c.Complete(nil)
		return
	}
	c.FrameSent()
}

// bigDone runs on the loop when writer w, started on connection conn, is done: the connection
// writes again, or closes if the write failed. A writer stopped with its connection has nothing
// left to do here.
func (a *AdapterProxy) bigDone(w *bigwrite.Writer, conn any, err error) {
	bufpool.Put(w.Buf())
	if a.big != w {
		return // stopped: its connection is gone, and what waited on it was failed with it
	}
	a.big = nil
	if a.state != stateConnected || any(a.conn) != conn {
		return
	}
	a.lastIO = a.loop.Now()
	if err != nil {
		c := a.conn
		a.warn("write failed, closing connection")
		a.closed(fmt.Errorf("write: %w", err))
		c.SetContext(nil)
		_ = c.Close()
		return
	}
	a.Flush()
}
