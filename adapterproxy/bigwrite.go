package adapterproxy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/internal/bufpool"
	"github.com/tarscomm/tarscomm/internal/call"
)

// bigWriteMin is the size from which a frame the socket cannot take at once is finished by a
// writer goroutine straight from its own buffer, instead of having its rest copied into gnet's
// outbound buffer. At megabytes per call that copy, and the buffer gnet allocates for it, are a
// quarter of the client's CPU.
const bigWriteMin = 1 << 20

// bigPoll is how long the writer waits for the socket to become writable between checks that
// the net thread is not closing.
const bigPoll = 50 * time.Millisecond

// fder is implemented by connections with a socket of their own (gnet.Conn).
type fder interface{ Fd() int }

// bigWriter is the writer goroutine of one large frame on one connection. It owns a duplicate
// of the connection's socket, so that the loop's gnet connection and the writer can each close
// theirs; the connection's closing side (closed, detach) stops it with stop, which shuts the
// socket down: the writer's next write fails at once, and the peer sees the connection end even
// though the writer's descriptor keeps the socket alive until the writer is done.
type bigWriter struct {
	conn any    // the connection it writes for
	buf  []byte // the frame's buffer (a bufpool buffer), the writer's until bigDone
	left atomic.Int64

	mu sync.Mutex // guards fd: stop must never shut down a number the writer already closed
	fd int        // the duplicate socket; -1 once the writer closed it
}

// stop shuts the socket down (and makes its last close a reset, so that the peer sees the end
// at once instead of after the bytes still queued): the writer ends with an error, and the
// peer, slow reader or not, sees the connection end. Safe for concurrent use with the writer.
func (w *bigWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	_ = syscall.SetsockoptLinger(w.fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0})
	_ = syscall.Shutdown(w.fd, syscall.SHUT_RDWR)
}

// close closes the writer's descriptor.
func (w *bigWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = syscall.Close(w.fd)
	w.fd = -1
}

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
	n, err := syscall.Write(fd, c.Frame)
	if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
		return false // gnet's write meets the same error and closes the connection
	}
	n = max(n, 0)
	a.lastIO = a.loop.Now()
	a.stats.Writes++
	a.stats.BytesOut += uint64(len(c.Frame))
	a.handed += int64(len(c.Frame))
	a.q.front()
	a.q.pop()
	if n == len(c.Frame) {
		a.written1(c)
		return true
	}
	// The call is written in part: it can no longer be retried elsewhere, and its frame now
	// belongs to the writer (the call may end, and be recycled, before the writer is done).
	buf := c.Frame
	c.Frame = nil
	a.written1(c)
	dup, err := syscall.Dup(fd)
	if err != nil {
		_, _ = conn.Write(buf[n:]) // gnet copies the rest; on error it closes the connection
		bufpool.Put(buf)
		return true
	}
	w := &bigWriter{conn: conn, buf: buf, fd: dup}
	rest := buf[n:]
	w.left.Store(int64(len(rest))) // counted against the send-buffer limit, as gnet's outbound bytes are
	a.big = w
	a.loop.Go(func(ctx context.Context) {
		err := writeAll(ctx, w, rest)
		w.close()
		a.loop.Post(func() { a.bigDone(w, err) })
	})
	return true
}

// stopBig stops the writer of the connection being given up, if any: the next connection
// writes at once, without waiting for a writer that may never finish. Must be called on the
// loop goroutine when the connection leaves (closed, detach).
func (a *AdapterProxy) stopBig() {
	if a.big != nil {
		a.big.stop()
		a.big = nil
	}
}

// bigLeft returns the bytes the writer has yet to write, 0 without one.
func (a *AdapterProxy) bigLeft() int64 {
	if a.big == nil {
		return 0
	}
	return a.big.left.Load()
}

// written1 completes a written one-way call; a two-way call waits for its reply.
func (a *AdapterProxy) written1(c *call.Call) {
	if c.Oneway {
		a.loop.Wheel().Remove(c)
		c.Complete(nil)
	}
}

// bigDone runs on the loop when writer w is done: the connection writes again, or closes if the
// write failed. A writer stopped with its connection has nothing left to do here.
func (a *AdapterProxy) bigDone(w *bigWriter, err error) {
	bufpool.Put(w.buf)
	w.buf = nil
	if a.big != w {
		return // stopped: its connection is gone, and what waited on it was failed with it
	}
	a.big = nil
	if a.state != stateConnected || any(a.conn) != w.conn {
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

// writeAll writes b to the non-blocking socket fd, waiting for it to become writable as often as
// needed, until b is written, a write fails (stop makes it fail), or ctx ends. It keeps w.left
// up to date: the loop reads it as the connection's progress (keepalive) and backlog.
func writeAll(ctx context.Context, w *bigWriter, b []byte) error {
	fd := w.fd // only the writer closes it, after this returns
	for len(b) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := syscall.Write(fd, b)
		switch {
		case err == nil:
			b = b[n:]
			w.left.Store(int64(len(b)))
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if err := waitWritable(fd, bigPoll); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return nil
}
