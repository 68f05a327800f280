package bigwrite

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Min is the size from which a buffer is worth writing this way: below it gnet's copy of what
// the socket does not take costs less than a goroutine hand-over.
const Min = 1 << 20

// poll is how long a writer waits for its socket to become writable between checks of its
// context.
const poll = 50 * time.Millisecond

// Direct writes b to the non-blocking socket fd once. It returns the bytes written (0 when the
// socket takes nothing now) and false when the socket failed: the caller then writes b through
// gnet, which meets the same error and closes the connection.
func Direct(fd int, b []byte) (n int, ok bool) {
	n, err := syscall.Write(fd, b)
	if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
		return 0, false
	}
	return max(n, 0), true
}

// DirectVec writes the slices of bs, in order, to the non-blocking socket fd with one vectored
// write (a few for many slices), as Direct writes one buffer.
func DirectVec(fd int, bs [][]byte) (n int, ok bool) {
	n, err := writev(fd, bs)
	if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
		return 0, false
	}
	return n, true
}

// Writer writes the rest of one buffer to one socket from its own goroutine (Run). Its
// descriptor is a duplicate of the connection's, so that the event loop and the writer can
// each close theirs; Stop shuts the socket down, which ends the writer's next write at once and
// shows the peer the end of the connection though the writer's descriptor keeps the socket
// alive until Run returns.
type Writer struct {
	buf  []byte    // the buffer handed to Start, the writer's until Run returned
	rest [][]byte  // what is left to write
	arr  [4][]byte // rest's array for a few slices (a frame's head, body and tail)
	left atomic.Int64

	mu sync.Mutex // guards fd: Stop must never shut down a number the writer already closed
	fd int        // the duplicate; -1 once Run closed it
}

// Start returns a Writer for buf[off:] on a duplicate of fd. The caller hands buf over: it is
// the writer's until Run returned (Buf gives it back then).
func Start(fd int, buf []byte, off int) (*Writer, error) {
	w, err := StartVec(fd, [][]byte{buf}, off)
	if w != nil {
		w.buf = buf
	}
	return w, err
}

// StartVec returns a Writer for the slices of bs, in order, less their first off bytes, on a
// duplicate of fd. The caller hands the slices' memory over until Run returned; bs itself is
// not kept.
func StartVec(fd int, bs [][]byte, off int) (*Writer, error) {
	dup, err := dupCloseOnExec(fd)
	if err != nil {
		return nil, err
	}
	w := &Writer{fd: dup}
	w.rest = Skip(append(w.arr[:0], bs...), off)
	left := 0
	for _, b := range w.rest {
		left += len(b)
	}
	w.left.Store(int64(left))
	return w, nil
}

// dupCloseOnExec duplicates fd, closed on exec: a child process started meanwhile (os/exec)
// must not hold the socket open after the connection is closed here. ForkLock keeps a fork from
// coming between the dup and the flag.
func dupCloseOnExec(fd int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	dup, err := syscall.Dup(fd)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(dup)
	return dup, nil
}

// Skip returns bs less its first n bytes, slicing bs's elements in place.
func Skip(bs [][]byte, n int) [][]byte {
	for len(bs) > 0 && n >= len(bs[0]) {
		n -= len(bs[0])
		bs = bs[1:]
	}
	if len(bs) > 0 {
		bs[0] = bs[0][n:]
	}
	return bs
}

// Run writes the rest of the buffer, waiting for the socket to become writable as often as
// needed, until it is written, a write fails (Stop makes it fail) or ctx ends; then it closes
// its descriptor. Call it once, on a goroutine of its own.
func (w *Writer) Run(ctx context.Context) error {
	err := w.run(ctx)
	w.mu.Lock()
	_ = syscall.Close(w.fd)
	w.fd = -1
	w.mu.Unlock()
	return err
}

func (w *Writer) run(ctx context.Context) error {
	fd := w.fd // only Run closes it, after this returns
	for left := w.left.Load(); left > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := writev(fd, w.rest)
		if n > 0 {
			w.rest = Skip(w.rest, n)
			left -= int64(n)
			w.left.Store(left)
		}
		switch {
		case err == nil, err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if err := WaitWritable(fd, poll); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return nil
}

// Stop shuts the socket down, with a reset as its last close (the peer sees the end at once,
// not after the bytes still queued): Run ends with an error. Safe for concurrent use with Run;
// a no-op once Run returned.
func (w *Writer) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	_ = syscall.SetsockoptLinger(w.fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0})
	_ = syscall.Shutdown(w.fd, syscall.SHUT_RDWR)
}

// Left returns the bytes not yet written: the connection's backlog and progress. Safe for
// concurrent use.
func (w *Writer) Left() int64 { return w.left.Load() }

// Buf returns the buffer handed to Start (nil for StartVec); it is the caller's again once Run
// returned.
func (w *Writer) Buf() []byte { return w.buf }
