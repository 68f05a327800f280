package peer

import (
	"net"
	"sync"

	"github.com/tarscomm/tarscomm/benchmarks/internal/tarswire"
)

// The two halves of a stdlib connection, shared by the stdlib client and the stdlib server:
// a writer goroutine that writes whatever frames were queued since its last write in one
// write (one writev when large bodies are among them), and a reader loop that reads into a
// buffer holding whole frames and hands each frame over.

// stdlibInlineMax is the body size from which a message's body is written from its own buffer
// instead of being copied into the connection's output buffer.
const stdlibInlineMax = 16 << 10

// frameWriter is the writing half of a stdlib connection. Whoever has frames to send appends
// them to its output buffer between begin and end (attach puts a large body in place without
// copying it) and wakes the writer goroutine (signal) once per batch; the goroutine (run)
// takes everything queued and writes it while the next batch fills the other of two output
// buffers.
type frameWriter struct {
	nc   net.Conn
	wake chan struct{} // capacity 1: a pending wakeup of the writer

	// What the writer has still to write, in order: segs, then out[mark:]. Small frames are
	// appended whole to out; a large body is attached after out[mark:] in segs, and the rest
	// of its frame starts the next part of out.
	mu      sync.Mutex
	out     []byte   // guarded by mu
	mark    int      // guarded by mu: out[:mark] is in segs
	segs    [][]byte // guarded by mu: alternately a part of out and an attached body
	pending bool     // guarded by mu: something was queued when begin was called

	// The writer's own: the buffers the callers fill next, and its vector for writev.
	spare     []byte
	spareSegs [][]byte
	iov       [][]byte
}

func newFrameWriter(nc net.Conn) *frameWriter {
	return &frameWriter{nc: nc, wake: make(chan struct{}, 1)}
}

// begin locks the queue and returns the output buffer to append frames to; end gives it back.
func (w *frameWriter) begin() []byte {
	w.mu.Lock()
	w.pending = len(w.out) > 0 || len(w.segs) > 0
	return w.out
}

// attach, between begin and end, queues body to be written from its own buffer right after
// out's bytes so far, and returns out to append the rest of the frame to. body must not
// change until the writer has written it (run's release says when).
func (w *frameWriter) attach(out, body []byte) []byte {
	w.segs = append(w.segs, out[w.mark:], body)
	w.mark = len(out)
	return out
}

// end stores out back and unlocks the queue. It reports whether the queue was empty before
// begin: then the writer must be signalled.
func (w *frameWriter) end(out []byte) (wasEmpty bool) {
	w.out = out
	wasEmpty = !w.pending
	w.mu.Unlock()
	return wasEmpty
}

// signal wakes the writer goroutine, unless a wakeup is already pending.
func (w *frameWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run is the writer goroutine: on each wakeup it writes the queue (write). It returns when
// done is closed, or with the error of a failed write.
func (w *frameWriter) run(done <-chan struct{}, release func(body []byte)) error {
	for {
		select {
		case <-w.wake:
		case <-done:
			return nil
		}
		if err := w.write(release); err != nil {
			return err
		}
	}
}

// write takes everything queued and writes it in one write, or one writev if bodies are
// attached, then passes each attached body to release (if not nil). One goroutine at a time
// may call it (run's).
func (w *frameWriter) write(release func(body []byte)) error {
	w.mu.Lock()
	buf, mark, segs := w.out, w.mark, w.segs
	w.out, w.mark, w.segs = w.spare[:0], 0, w.spareSegs[:0]
	w.mu.Unlock()
	var err error
	switch {
	case len(segs) > 0:
		w.iov = append(append(w.iov[:0], segs...), buf[mark:])
		bufs := net.Buffers(w.iov)
		_, err = bufs.WriteTo(w.nc)
		if release != nil {
			for i := 1; i < len(segs); i += 2 {
				release(segs[i])
			}
		}
		clear(segs) // drop the references to the bodies
		clear(w.iov)
	case len(buf) > 0:
		_, err = w.nc.Write(buf)
	}
	w.spare, w.spareSegs = buf, segs
	return err
}

// readFrames reads frames from nc until it fails, passing each whole frame (length prefix
// included, valid until frame returns) to frame, and calling batch (if not nil) after the
// frames of each read. It reads into a buffer of 256 KiB, grown once to the largest frame
// seen, and returns the first error of a read, of a frame's length (above maxFrame), or of
// frame.
func readFrames(nc net.Conn, maxFrame int, frame func([]byte) error, batch func()) error {
	buf := make([]byte, 256<<10)
	n := 0
	for {
		m, err := nc.Read(buf[n:])
		if err != nil {
			return err
		}
		n += m
		off := 0
		for {
			l, err := tarswire.FrameLen(buf[off:n], maxFrame)
			if err != nil {
				return err
			}
			if l == 0 || off+l > n {
				if l > len(buf) { // a frame larger than the buffer: grow it
					nb := make([]byte, l)
					n = copy(nb, buf[off:n])
					buf, off = nb, 0
				}
				break
			}
			if err := frame(buf[off : off+l]); err != nil {
				return err
			}
			off += l
		}
		if batch != nil {
			batch()
		}
		n = copy(buf, buf[off:n])
	}
}
