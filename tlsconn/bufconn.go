package tlsconn

import (
	"net"
	"sync"
)

// bufConn is the network connection under a bridged tls.Conn. It reads through a large buffer,
// so that one read system call fetches every record that has arrived (tls.Conn reads one record
// at a time, about 16 KiB), and, while the encrypting goroutine writes a batch, gathers the
// batch's records into one write system call. It does nothing else: deadlines, Close and the
// addresses are the connection's.
type bufConn struct {
	net.Conn
	in     []byte // read buffer: in[r:end] is unread
	r, end int

	mu    sync.Mutex // the reading goroutine writes too (alerts, key updates)
	batch bool       // gather writes until flush
	w     []byte
}

// readBuffer is the read buffer of a bufConn: several full TLS records.
const readBuffer = 128 << 10

func newBufConn(c net.Conn) *bufConn {
	return &bufConn{Conn: c, in: make([]byte, readBuffer)}
}

// Read returns buffered bytes, or reads once. An error that comes with bytes is dropped: it
// comes back on the next read if it lasts (end of file, reset), and must not if it does not
// (a deadline since moved), which is why this is not a bufio.Reader, whose errors stay.
func (b *bufConn) Read(p []byte) (int, error) {
	if b.r == b.end {
		if len(p) >= len(b.in) {
			return b.Conn.Read(p)
		}
		n, err := b.Conn.Read(b.in)
		if n == 0 {
			return 0, err
		}
		b.r, b.end = 0, n
	}
	n := copy(p, b.in[b.r:b.end])
	b.r += n
	return n, nil
}

func (b *bufConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batch {
		b.w = append(b.w, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

// gather makes writes wait for flush.
func (b *bufConn) gather() {
	b.mu.Lock()
	b.batch = true
	b.mu.Unlock()
}

// flush writes what was gathered in one write and stops gathering.
func (b *bufConn) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batch = false
	if len(b.w) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.w)
	if cap(b.w) > 4*bufSize {
		b.w = nil
	} else {
		b.w = b.w[:0]
	}
	return err
}
