package adapterproxy

import (
	"context"
	"fmt"
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

// writeBig writes c, the queue's first call, whose frame is large, directly to the socket. It
// reports false when it did nothing (gnet's outbound buffer is not empty, or there is no socket
// to write to): the caller writes c through gnet as any call. Otherwise c has left the queue:
// written whole, or written in part with the rest handed to a writer goroutine (the connection
// then writes nothing else until bigDone). Must be called on the loop goroutine.
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
	a.bigWriting = true
	rest := buf[n:]
	a.bigBytes = len(rest) // counted against the send-buffer limit, as gnet's outbound bytes are
	a.loop.Go(func(ctx context.Context) {
		err := writeAll(ctx, dup, rest)
		_ = syscall.Close(dup)
		a.loop.Post(func() { a.bigDone(conn, buf, err) })
	})
	return true
}

// written1 completes a written one-way call; a two-way call waits for its reply.
func (a *AdapterProxy) written1(c *call.Call) {
	if c.Oneway {
		a.loop.Wheel().Remove(c)
		c.Complete(nil)
	}
}

// bigDone runs on the loop when the writer finished buf on conn: the connection writes again,
// or closes if the write failed.
func (a *AdapterProxy) bigDone(conn any, buf []byte, err error) {
	bufpool.Put(buf)
	a.bigWriting, a.bigBytes = false, 0
	if a.state != stateConnected || any(a.conn) != conn {
		return // the connection is gone; what waited on it was failed with it
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
// needed, until b is written, a write fails, or ctx ends.
func writeAll(ctx context.Context, fd int, b []byte) error {
	for len(b) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := syscall.Write(fd, b)
		switch {
		case err == nil:
			b = b[n:]
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
