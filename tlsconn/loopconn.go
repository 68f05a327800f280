package tlsconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// A Session is the client side of a TLS connection whose handshake ran off the loop, on the
// connection itself, and whose records are then written and read on the loop by a LoopConn,
// with no goroutine and no copy through the kernel beyond the socket's own.
//
// tls.Conn is given a switchConn: during the handshake (and anything else the dialer does on
// the connection, such as TARS authentication) it is the real connection; Detach makes it a
// pair of memory buffers that the loop fills with what it read and empties into its writes.
// Reading an empty buffer fails at once with a temporary error, which tls.Conn does not keep:
// it returns to the loop and resumes the record where it stopped on the next read.
type Session struct {
	tc   *tls.Conn
	sc   *switchConn
	addr string
	// client marks the client side (ClientSession) of a handshake in which the server asked for
	// a certificate: a silent close by the server is then a TLS failure (Cause).
	client bool
	heard  bool // the peer spoke before the loop took over (Heard)
	// unfit: the server asked for a certificate, this side has some (cert), and none is issued by
	// a CA the server named, so none was sent: the likely cause of the server's refusal.
	unfit bool
	// refuseBy is when a silent close stops being a likely refusal (Cause): a server refuses a
	// certificate as soon as it has it, a round trip after the handshake, which took at least
	// one; a close later than twice the handshake's time (and 200 ms) is an idle rule, a
	// restart, a lost connection.
	refuseBy time.Time
}

// ClientSession runs the client side of a TLS handshake on nc, as Client does, and returns the
// Session to run on the loop. On failure nc is closed and the error is an *Error.
func ClientSession(ctx context.Context, nc net.Conn, cfg *tls.Config, host, addr string, limit time.Duration) (*Session, error) {
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
		if a, err := netip.ParseAddr(host); err == nil && a.Zone() != "" {
			// fe80::1%eth0: the address is what the certificate names (crypto/tls would check
			// the zoned text as a DNS name).
			cfg.ServerName = a.WithZone("").String()
		}
	}
	// Whether the server asks for a certificate: only then can its silent close after the
	// handshake be a refusal of this side's certificate (Cause). The certificate sent is the one
	// crypto/tls would choose.
	asked, unfit := false, false // written during the handshake, read after it, on this goroutine's behalf
	get, certs := cfg.GetClientCertificate, cfg.Certificates
	cfg.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked = true
		if get != nil {
			return get(cri)
		}
		for i := range certs {
			if cri.SupportsCertificate(&certs[i]) == nil {
				return &certs[i], nil
			}
		}
		unfit = len(certs) > 0
		return new(tls.Certificate), nil // none fits: send none
	}
	sc := &switchConn{real: nc}
	tc := tls.Client(sc, cfg)
	start := time.Now()
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		e := handshakeError(addr, err, limit)
		if unfit {
			e.Hint = unfitHint
		}
		return nil, e
	}
	end := time.Now()
	refuseBy := end.Add(max(2*end.Sub(start), refusalWindow))
	return &Session{tc: tc, sc: sc, addr: addr, client: asked, unfit: unfit, refuseBy: refuseBy}, nil
}

// unfitHint is the hint of a failure after a handshake in which this side sent no certificate
// because none of its own fitted the server's request (Session.unfit).
const unfitHint = "the server asked for a client certificate issued by one of its CAs, and none of this side's (cert) is: none was sent"

// refusalWindow is the least time after the handshake in which a silent close is taken for a
// refusal of this side's certificate (Session.refuseBy).
const refusalWindow = 200 * time.Millisecond

// TLS returns the session's connection, for exchanges the dialer makes before Detach
// (authentication); they block on the network as usual.
func (s *Session) TLS() *tls.Conn { return s.tc }

// Detach stops using the network connection: from now on the loop owns it (enroll it with
// gnet, which duplicates its descriptor and closes it) and Attach runs the session there.
func (s *Session) Detach() { s.sc.mem = true }

// Attach returns the LoopConn that runs the session on c, the loop's connection of the detached
// network connection. Must be called on the loop goroutine.
func (s *Session) Attach(c gnet.Conn) *LoopConn {
	return &LoopConn{Conn: c, s: s, heard: s.heard}
}

// Heard records that the peer spoke on the session before Detach (it answered TARS
// authentication): a later close without a byte of plaintext is then not a refusal of this
// side's certificate (Cause).
func (s *Session) Heard() { s.heard = true }

// maxRecord is the largest plaintext of one TLS record.
const maxRecord = 16 << 10

// bufSize is the size past which Pump and flushOut drop their buffers once they are empty
// enough, rather than keep them for the connection's lifetime.
const bufSize = 256 << 10

// errWouldBlock is what a detached switchConn returns when it has no byte: tls.Conn sees a
// temporary network error, keeps the part of a record it has, and returns.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tlsconn: no input yet" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// switchConn is the connection under a Session's tls.Conn. Until the handshake is over it is
// the network connection (a client's, dialled off the loop) or the loop's connection fed by the
// loop (a server's); then it is the loop's buffers: in (bytes fed during the handshake and not
// consumed by it), src (what Pump got from the loop) and out (records for the loop to write).
type switchConn struct {
	real  net.Conn     // client: the network connection until Detach
	gc    gnet.Conn    // server: the loop's connection, written during the handshake
	guard func(func()) // server: runs a call on gc unless the engine is shutting down

	mu     sync.Mutex // server, during the handshake: the loop feeds in, the handshake reads it
	fed    sync.Cond  // signalled when in grows or closed is set
	mem    bool       // the loop's buffers from now on
	closed bool       // server: the loop's connection closed, or the handshake was given up
	in     []byte
	hsOut  []byte // server, during the handshake: records for the loop to write (guarded by mu)
	src    []byte
	out    []byte
}

func (s *switchConn) Read(p []byte) (int, error) {
	if s.real != nil && !s.mem {
		return s.real.Read(p)
	}
	if !s.mem {
		s.mu.Lock()
		defer s.mu.Unlock()
		for len(s.in) == 0 && !s.closed {
			s.fed.Wait()
		}
		if len(s.in) == 0 {
			return 0, net.ErrClosed
		}
	}
	if len(s.in) > 0 {
		n := copy(p, s.in)
		s.in = s.in[n:]
		return n, nil
	}
	if len(s.src) == 0 {
		return 0, errWouldBlock
	}
	n := copy(p, s.src)
	s.src = s.src[n:]
	return n, nil
}

func (s *switchConn) Write(p []byte) (int, error) {
	switch {
	case s.mem:
		s.out = append(s.out, p...)
		return len(p), nil
	case s.real != nil:
		return s.real.Write(p)
	}
	// A server's handshake, off the loop: the records wait in hsOut for the loop, which Wake
	// makes run Feed, to write them. Writing them from here (AsyncWrite) could put them after
	// records the loop writes once the handshake is over: TLS records must go out in order.
	s.mu.Lock()
	closed := s.closed
	s.hsOut = append(s.hsOut, p...)
	s.mu.Unlock()
	if closed {
		return 0, net.ErrClosed
	}
	s.guard(func() { _ = s.gc.Wake(nil) })
	return len(p), nil
}

// Close ends a handshake in progress (crypto/tls closes the connection when the handshake's
// context ends). Once the loop's buffers are used, the loop closes its connection: nothing here.
func (s *switchConn) Close() error {
	switch {
	case s.mem:
		return nil
	case s.real != nil:
		return s.real.Close()
	}
	s.mu.Lock()
	s.closed = true
	s.fed.Broadcast()
	s.mu.Unlock()
	return nil
}

func (s *switchConn) LocalAddr() net.Addr {
	if s.real != nil {
		return s.real.LocalAddr()
	}
	return s.gc.LocalAddr()
}

func (s *switchConn) RemoteAddr() net.Addr {
	if s.real != nil {
		return s.real.RemoteAddr()
	}
	return s.gc.RemoteAddr()
}

func (s *switchConn) SetDeadline(t time.Time) error {
	if s.real != nil && !s.mem {
		return s.real.SetDeadline(t)
	}
	return nil
}

func (s *switchConn) SetReadDeadline(t time.Time) error {
	if s.real != nil && !s.mem {
		return s.real.SetReadDeadline(t)
	}
	return nil
}

func (s *switchConn) SetWriteDeadline(t time.Time) error {
	if s.real != nil && !s.mem {
		return s.real.SetWriteDeadline(t)
	}
	return nil
}

// LoopConn is a gnet.Conn carrying TLS: Write and Writev encrypt, Peek, Next, Read, Discard and
// InboundBuffered read the plaintext that Pump decrypted; everything else is the connection's.
// Code written for a plain gnet.Conn (the AdapterProxy) runs on it unchanged. Its context, set
// with SetContext, is stored in the connection wrapped in a *Bound, so that the loop's callbacks
// find the LoopConn. AsyncWrite, AsyncWritev, ReadFrom and WriteTo bypass TLS: do not use them.
// Every method must be called on the loop goroutine.
type LoopConn struct {
	gnet.Conn
	s     *Session
	plain []byte // decrypted bytes: plain[off:] are unread
	off   int
	sink  []byte // Fill: where Pump decrypts the next bytes, once plain is read
	sunk  int    // bytes Pump decrypted into the sink since Fill
	cause error  // the TLS failure that ended the connection
	heard bool   // some plaintext arrived: the peer spoke after the handshake
}

// Bound is the gnet context of a LoopConn's connection: the LoopConn and the value its user set.
type Bound struct {
	Conn  *LoopConn
	Value any
}

// Context returns what SetContext stored.
func (l *LoopConn) Context() any {
	if b, ok := l.Conn.Context().(*Bound); ok {
		return b.Value
	}
	return nil
}

// SetContext stores v, wrapped in a *Bound; nil clears the context.
func (l *LoopConn) SetContext(v any) {
	if v == nil {
		l.Conn.SetContext(nil)
		return
	}
	l.Conn.SetContext(&Bound{Conn: l, Value: v})
}

// Pump decrypts what the connection read into the plaintext buffer and writes what TLS has to
// answer (key updates). Call it at the start of every OnTraffic of the connection, before
// reading. An error ends the connection: return gnet.Close; Cause then tells why.
func (l *LoopConn) Pump() error {
	sc := l.s.sc
	if n := l.Conn.InboundBuffered(); n > 0 {
		sc.src, _ = l.Conn.Next(n) // a view: tls.Conn consumes all of it below
	}
	if l.off > 0 {
		n := copy(l.plain, l.plain[l.off:])
		l.plain, l.off = l.plain[:n], 0
	}
	var err error
	for {
		var n int
		if len(l.sink) > 0 && len(l.plain) == 0 {
			// The rest of a frame being assembled: straight into its buffer.
			n, err = l.s.tc.Read(l.sink)
			l.sink, l.sunk = l.sink[n:], l.sunk+n
		} else {
			if cap(l.plain)-len(l.plain) < maxRecord {
				l.plain = append(l.plain, make([]byte, max(2*maxRecord, cap(l.plain)))...)[:len(l.plain)]
			}
			n, err = l.s.tc.Read(l.plain[len(l.plain):cap(l.plain)])
			l.plain = l.plain[:len(l.plain)+n]
		}
		if n > 0 {
			l.heard = true
		}
		if err != nil {
			break
		}
	}
	sc.src = nil
	if ferr := l.flushOut(); ferr != nil {
		return ferr
	}
	if err == errWouldBlock {
		if cap(l.plain) > 4*bufSize && len(l.plain) < cap(l.plain)/8 {
			l.plain = append([]byte(nil), l.plain...)
		}
		return nil
	}
	if isTLSFailure(err) {
		e := &Error{Addr: l.s.addr, Op: "read", Err: err}
		if isRemoteAlert(err) {
			e.Hint = "the peer ended the connection with a TLS alert; after a TLS 1.3 handshake that is how a refused client certificate shows"
			if l.s.unfit {
				e.Hint = unfitHint
			}
		}
		l.cause = e
		return e
	}
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("the peer closed the TLS session: %w", io.EOF) // close_notify
	}
	l.cause = err
	return err
}

// Cause returns why the connection closed, given err, the close's own error: the TLS failure
// Pump met if any; on the client side of a handshake in which the server asked for a
// certificate, a TLS error (matching ErrTLS) if the server closed the connection (EOF or reset,
// without close_notify) soon after the handshake (within twice its time, at least 200 ms)
// before sending a byte of plaintext, which is how a TLS server that refuses the
// client's certificate after the handshake (TarsCpp) shows; or else err (a server that asked for
// none and closes, or closes later, as an idle rule does, is a lost connection, a crash or a
// restart).
func (l *LoopConn) Cause(err error) error {
	if l.cause != nil {
		return l.cause
	}
	if l.s.client && !l.heard && peerClosed(err) && time.Now().Before(l.s.refuseBy) {
		hint := "the peer closed the connection right after the handshake without sending anything: perhaps it refused this side's client certificate"
		if l.s.unfit {
			hint = unfitHint
		}
		return &Error{Addr: l.s.addr, Op: "read", Err: err, Hint: hint}
	}
	return err
}

// peerClosed reports whether err is the peer closing or resetting the connection.
func peerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// flushOut writes the records TLS produced.
func (l *LoopConn) flushOut() error {
	sc := l.s.sc
	if len(sc.out) == 0 {
		return nil
	}
	_, err := l.Conn.Write(sc.out)
	if cap(sc.out) > 4*bufSize {
		sc.out = nil
	} else {
		sc.out = sc.out[:0]
	}
	return err
}

// Write encrypts p and writes its records.
func (l *LoopConn) Write(p []byte) (int, error) {
	if _, err := l.s.tc.Write(p); err != nil {
		return 0, err
	}
	if err := l.flushOut(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Writev encrypts the slices and writes their records at once.
func (l *LoopConn) Writev(bs [][]byte) (int, error) {
	n := 0
	for _, b := range bs {
		if _, err := l.s.tc.Write(b); err != nil {
			return 0, err
		}
		n += len(b)
	}
	if err := l.flushOut(); err != nil {
		return 0, err
	}
	return n, nil
}

// InboundBuffered returns the plaintext bytes not read yet.
func (l *LoopConn) InboundBuffered() int { return len(l.plain) - l.off }

// Peek returns the next n plaintext bytes (all with n < 0) without consuming them; the view is
// valid until the next Pump.
func (l *LoopConn) Peek(n int) ([]byte, error) {
	have := len(l.plain) - l.off
	if n < 0 || n > have {
		if n > have {
			return l.plain[l.off:], io.ErrShortBuffer
		}
		n = have
	}
	return l.plain[l.off : l.off+n], nil
}

// Next returns and consumes the next n plaintext bytes (all with n < 0).
func (l *LoopConn) Next(n int) ([]byte, error) {
	b, err := l.Peek(n)
	l.off += len(b)
	return b, err
}

// Discard consumes the next n plaintext bytes (all with n < 0).
func (l *LoopConn) Discard(n int) (int, error) {
	b, _ := l.Peek(n)
	l.off += len(b)
	return len(b), nil
}

// Fill has Pump decrypt the next len(p) bytes of plaintext, those after everything read so
// far, straight into p instead of into its own buffer, from which Read would copy them again:
// the Assembler of package inbound hands it the rest of a large frame. Filled returns how many
// bytes Pump put there since, and forgets p; Fill(nil) forgets it too. Until then p must stay
// the caller's.
func (l *LoopConn) Fill(p []byte) { l.sink, l.sunk = p, 0 }

// Filled returns how many bytes Pump decrypted into the slice given to Fill, and forgets it.
func (l *LoopConn) Filled() int {
	n := l.sunk
	l.sink, l.sunk = nil, 0
	return n
}

// Read copies and consumes plaintext.
func (l *LoopConn) Read(p []byte) (int, error) {
	n := copy(p, l.plain[l.off:])
	l.off += n
	return n, nil
}

// Flush writes what gnet holds of the connection's output.
func (l *LoopConn) Flush() error { return l.Conn.Flush() }

// OutboundBuffered returns the encrypted bytes gnet could not write yet.
func (l *LoopConn) OutboundBuffered() int { return l.Conn.OutboundBuffered() }
