package tlsconn

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/gnetlog"
	"github.com/tarscomm/tarscomm/internal/tlstest"
)

// TestMain fails the package if a test leaves a goroutine behind (ants, gnet's dependency,
// starts two process-wide goroutines in its init).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// These tests run a client Session's record path as the net thread runs it: the handshake on
// the dialled connection, then the connection enrolled with a gnet loop, whose OnTraffic
// pumps the records into plaintext and whose OnClose asks Cause why it ended. The peer is a
// crypto/tls server on a loopback socket the test accepted; it writes its records in pieces
// the test chooses, each read by the loop before the next is written, so that records arrive
// cut and spread over reads exactly as the test says.

// liveness bounds every wait: a hang fails the test, nothing here is timed.
const liveness = 10 * time.Second

// loopClient is the loop side: a gnet client with one TLS connection.
type loopClient struct {
	gnet.BuiltinEventEngine
	sess   *Session
	opened chan *LoopConn
	closed chan error // Cause of the close

	minRead atomic.Int64 // the handler reads plaintext once this much is buffered (a frame)
	// Counted on the loop, read by the test.
	rawIn   atomic.Int64 // TLS bytes the loop took from the socket
	reads   atomic.Int64 // OnTraffic calls that took TLS bytes
	partial atomic.Int64 // of those, the ones that decrypted no plaintext (a record cut short)
	plainCp atomic.Int64 // capacity of the plaintext buffer after the last Pump

	mu    sync.Mutex
	plain bytes.Buffer // plaintext read
}

func (h *loopClient) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	l := h.sess.Attach(c)
	l.SetContext(h)
	h.opened <- l
	return nil, gnet.None
}

func (h *loopClient) OnTraffic(c gnet.Conn) gnet.Action {
	l := c.Context().(*Bound).Conn
	raw := l.Conn.InboundBuffered()
	before := l.InboundBuffered()
	err := l.Pump()
	h.plainCp.Store(int64(cap(l.plain)))
	if raw > 0 {
		h.reads.Add(1)
		if l.InboundBuffered() == before {
			h.partial.Add(1)
		}
	}
	if int64(l.InboundBuffered()) >= h.minRead.Load() {
		p, _ := l.Next(-1)
		h.mu.Lock()
		h.plain.Write(p)
		h.mu.Unlock()
	}
	h.rawIn.Add(int64(raw))
	if err != nil {
		return gnet.Close
	}
	return gnet.None
}

func (h *loopClient) OnClose(c gnet.Conn, err error) gnet.Action {
	if b, ok := c.Context().(*Bound); ok {
		h.closed <- b.Conn.Cause(err)
	}
	return gnet.None
}

// waitPlain waits until n bytes of plaintext were read, and returns them.
func (h *loopClient) waitPlain(t *testing.T, n int) []byte {
	t.Helper()
	for deadline := time.Now().Add(liveness); ; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		got := h.plain.Len()
		if got >= n {
			b := bytes.Clone(h.plain.Bytes())
			h.mu.Unlock()
			return b
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("read %d bytes of plaintext in %v, want %d", got, liveness, n)
		}
	}
}

// waitClosed returns the Cause the connection closed with.
func (h *loopClient) waitClosed(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.closed:
		return err
	case <-time.After(liveness):
		t.Fatalf("the connection did not close within %v", liveness)
		return nil
	}
}

// pacedConn is the server's socket: it writes each Write in pieces of the sizes in pieces
// (cycling; all at once without), and after each piece waits until the loop has taken every
// byte written, so that each piece is a read of its own on the loop.
type pacedConn struct {
	net.Conn
	loop    *loopClient
	pieces  []int
	i       int
	written int64
}

func (p *pacedConn) Write(b []byte) (int, error) {
	total := len(b)
	for len(b) > 0 {
		n := len(b)
		if len(p.pieces) > 0 {
			n = min(n, p.pieces[p.i%len(p.pieces)])
			p.i++
		}
		if _, err := p.Conn.Write(b[:n]); err != nil {
			return total - len(b), err
		}
		b = b[n:]
		p.written += int64(n)
		if len(p.pieces) > 0 {
			if err := p.waitTaken(); err != nil {
				return total - len(b), err
			}
		}
	}
	return total, nil
}

// waitTaken waits until the loop has taken every byte written.
func (p *pacedConn) waitTaken() error {
	for deadline := time.Now().Add(liveness); p.loop.rawIn.Load() < p.written; time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the loop took %d of %d bytes in %v", p.loop.rawIn.Load(), p.written, liveness)
		}
	}
	return nil
}

// tlsPair is a client LoopConn on a gnet loop and the crypto/tls server it is connected to.
type tlsPair struct {
	loop   *loopClient
	conn   *LoopConn  // the client's, on the loop
	server *tls.Conn  // over paced
	paced  *pacedConn // the server's socket, writing in pieces
	raw    net.Conn   // the server's socket itself
}

// newTLSPair connects a Session to a crypto/tls server at version on a loopback port the test
// listens on, enrolls it with a gnet loop of its own, and returns both ends once the loop has
// opened the connection. t.Cleanup stops the loop and closes the server's socket.
func newTLSPair(t *testing.T, version uint16, serverEdits ...func(*tls.Config)) *tlsPair {
	t.Helper()
	ca := tlstest.NewCA(t, "record")
	pair := ca.Issue(t, tlstest.Leaf{Name: "server"})
	scfg, err := ServerConfig(Files{Cert: pair.Cert, Key: pair.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	// No session tickets: after the handshake the server writes only what the test says.
	scfg.SessionTicketsDisabled = true
	scfg.MinVersion, scfg.MaxVersion = version, version
	for _, edit := range serverEdits {
		edit(scfg)
	}
	ccfg, err := ClientConfig(Files{CA: ca.File})
	if err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := &tlsPair{loop: &loopClient{opened: make(chan *LoopConn, 1), closed: make(chan error, 1)}}
	p.paced = &pacedConn{loop: p.loop}
	accepted := make(chan error, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			accepted <- err
			return
		}
		p.raw, p.paced.Conn = raw, raw
		p.server = tls.Server(p.paced, scfg)
		ctx, cancel := context.WithTimeout(context.Background(), liveness)
		defer cancel()
		accepted <- p.server.HandshakeContext(ctx)
	}()

	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	sess, err := ClientSession(ctx, nc, ccfg, "127.0.0.1", ln.Addr().String(), liveness)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	p.paced.written = 0 // the loop sees only what follows the handshake
	t.Cleanup(func() { _ = p.raw.Close() })
	sess.Detach()
	p.loop.sess = sess

	client, err := gnet.NewClient(p.loop, gnet.WithNumEventLoop(1), gnet.WithLogger(gnetlog.New(zap.NewNop())))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.Stop(); err != nil {
			t.Errorf("stop the loop: %v", err)
		}
	})
	if _, err := client.Enroll(nc); err != nil {
		t.Fatal(err)
	}
	select {
	case p.conn = <-p.loop.opened:
	case <-time.After(liveness):
		t.Fatalf("the loop did not open the connection within %v", liveness)
	}
	return p
}

var versions = []struct {
	name string
	v    uint16
}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}}

// pattern returns n bytes that differ from any shifted copy of themselves for a long stretch.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestRecordsCutAcrossReads: records of every size, up to one of 1 MiB spanning 64 records,
// arrive in pieces of 1 to 20,000 bytes, each a read of its own on the loop: a record header
// cut after its first byte, a record spread over several reads, several records in one read.
// The plaintext comes out whole and in order, and some reads took TLS bytes that completed no
// record (Pump kept the partial record and resumed it on the next read).
func TestRecordsCutAcrossReads(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			p := newTLSPair(t, v.v)
			p.paced.pieces = []int{1, 4, 5, 17, 1000, 7000, 20000, 3}
			var want []byte
			for i, n := range []int{1, 100, maxRecord - 1, maxRecord, maxRecord + 1, 1<<20 + 3, 2} {
				msg := pattern(n, i)
				want = append(want, msg...)
				if _, err := p.server.Write(msg); err != nil {
					t.Fatal(err)
				}
			}
			if got := p.loop.waitPlain(t, len(want)); !bytes.Equal(got, want) {
				t.Fatalf("plaintext differs: got %d bytes, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			reads, partial := p.loop.reads.Load(), p.loop.partial.Load()
			if records := int64(1<<20/maxRecord + 7); reads <= records || partial == 0 {
				t.Errorf("%d reads, %d of them a partial record: want more reads than the %d records, and some partial", reads, partial, records)
			}
			t.Logf("%d reads of TLS bytes, %d of them completing no record", reads, partial)
		})
	}
}

// TestRecordsLargeFrameBuffer: the reader waits for a 3 MiB frame (as the AdapterProxy waits
// for a whole frame), so Pump buffers its plaintext, then the frame is read; the next small
// record finds the buffer shrunk (it is not kept at 3 MiB for the connection's life).
func TestRecordsLargeFrameBuffer(t *testing.T) {
	p := newTLSPair(t, tls.VersionTLS13)
	const size = 3 << 20
	p.loop.minRead.Store(size)
	frame := pattern(size, 7)
	if _, err := p.server.Write(frame); err != nil {
		t.Fatal(err)
	}
	if got := p.loop.waitPlain(t, size); !bytes.Equal(got, frame) {
		t.Fatalf("frame differs at %d", firstDiff(got, frame))
	}
	if c := p.loop.plainCp.Load(); c < size {
		t.Fatalf("plaintext buffer of %d bytes held a %d-byte frame", c, size)
	}
	p.loop.minRead.Store(0)
	if _, err := p.server.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
	if got := p.loop.waitPlain(t, size+4); string(got[size:]) != "next" {
		t.Fatalf("after the frame: %q, want %q", got[size:], "next")
	}
	if c := p.loop.plainCp.Load(); c > 4*bufSize {
		t.Errorf("plaintext buffer still %d bytes after the frame was read, want at most %d", c, 4*bufSize)
	}
}

// TestRecordsWrite: Write and Writev on the loop encrypt into records the peer decrypts whole,
// a 1 MiB slice and small ones, in order.
func TestRecordsWrite(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			p := newTLSPair(t, v.v)
			parts := [][]byte{pattern(5, 1), pattern(1<<20, 2), pattern(maxRecord+1, 3)}
			written := make(chan error, 1)
			err := p.conn.Conn.Wake(func(gnet.Conn, error) error {
				if _, err := p.conn.Write(parts[0]); err != nil {
					written <- err
					return nil
				}
				_, err := p.conn.Writev(parts[1:])
				written <- err
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := bytes.Join(parts, nil)
			got := make([]byte, len(want))
			_ = p.raw.SetReadDeadline(time.Now().Add(liveness))
			if _, err := io.ReadFull(p.server, got); err != nil {
				t.Fatalf("the peer read: %v", err)
			}
			if err := <-written; err != nil {
				t.Fatalf("write on the loop: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the peer read different bytes (first difference at %d)", firstDiff(got, want))
			}
		})
	}
}

// TestRecordsCloseNotify: the peer's last plaintext and then its close_notify, cut into
// pieces: the plaintext is read, and the connection ends with io.EOF saying the peer closed
// the TLS session, not with a TLS failure.
func TestRecordsCloseNotify(t *testing.T) {
	p := newTLSPair(t, tls.VersionTLS13)
	p.paced.pieces = []int{2, 3, 50}
	if _, err := p.server.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	if err := p.server.CloseWrite(); err != nil { // close_notify, the socket left open
		t.Fatal(err)
	}
	if got := p.loop.waitPlain(t, 10); string(got) != "last words" {
		t.Fatalf("read %q before the close", got)
	}
	err := p.loop.waitClosed(t)
	if !errors.Is(err, io.EOF) || errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "closed the TLS session") {
		t.Fatalf("close after close_notify: %v, want io.EOF saying the peer closed the TLS session, not ErrTLS", err)
	}
}

// TestRecordsBadRecord: after the handshake the peer writes bytes that are not a record of the
// session (a forged application-data record; a plain-text HTTP answer): the connection ends
// with an *Error matching ErrTLS whose message says TLS and the peer's address.
func TestRecordsBadRecord(t *testing.T) {
	forged := append([]byte{23, 3, 3, 0, 40}, pattern(40, 9)...) // application data, TLS 1.2 header
	for _, c := range []struct {
		name  string
		bytes []byte
	}{
		{"forged record", forged},
		{"HTTP answer", []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")},
	} {
		for _, v := range versions {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				p := newTLSPair(t, v.v)
				if _, err := p.server.Write([]byte("fine")); err != nil {
					t.Fatal(err)
				}
				p.loop.waitPlain(t, 4)
				if _, err := p.raw.Write(c.bytes); err != nil {
					t.Fatal(err)
				}
				err := p.loop.waitClosed(t)
				var te *Error
				if !errors.Is(err, ErrTLS) || !errors.As(err, &te) || te.Op != "read" {
					t.Fatalf("after a bad record: %v, want a TLS read *Error", err)
				}
				// The Session's address is the server's: the listener's, the local end of raw.
				if msg := err.Error(); !strings.Contains(msg, "tls") || !strings.Contains(msg, p.raw.LocalAddr().String()) {
					t.Errorf("error %q does not say tls and name the peer", msg)
				}
			})
		}
	}
}

// TestRecordsSilentCloseAfterHandshake: a server that asked for a client certificate closes its
// socket right after the handshake without a byte of plaintext or a close_notify (TarsCpp
// refusing a client certificate): the connection ends with a TLS error that says so. A server
// that asked for none and closes so is a lost connection (a crash, a restart), not a TLS failure
// (before, it was reported as a refused certificate).
func TestRecordsSilentCloseAfterHandshake(t *testing.T) {
	p := newTLSPair(t, tls.VersionTLS13, func(c *tls.Config) { c.ClientAuth = tls.RequestClientCert })
	if err := p.raw.Close(); err != nil {
		t.Fatal(err)
	}
	err := p.loop.waitClosed(t)
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "right after the handshake") {
		t.Fatalf("silent close after the handshake: %v, want a TLS error saying the peer closed right after the handshake", err)
	}

	p = newTLSPair(t, tls.VersionTLS13)
	if err := p.raw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.loop.waitClosed(t); errors.Is(err, ErrTLS) {
		t.Fatalf("silent close by a server that asked for no certificate: %v, want a plain lost connection", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
