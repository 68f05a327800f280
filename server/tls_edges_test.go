package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
)

// The server's TLS handshakes and TARS authentication at their failure edges.

// trickleConn writes one byte per pause: a client whose handshake bytes keep coming, slowly.
type trickleConn struct {
	net.Conn
	pause time.Duration
}

func (c *trickleConn) Write(p []byte) (int, error) {
	for i := range p {
		time.Sleep(c.pause)
		if _, err := c.Conn.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// TestServerHandshakeTrickleCut: a client whose ClientHello arrives a byte every 20 ms
// (about 5 s for all of it) is cut at the handshake timeout (300 ms), bytes arriving or not:
// the timeout bounds the handshake, not the silence.
func TestServerHandshakeTrickleCut(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	_, addr, remotes := startTLSServer(t, ts, false, WithHandshakeTimeout(300*time.Millisecond))
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	tc := tls.Client(&trickleConn{Conn: nc, pause: 20 * time.Millisecond}, clientConfig(t, ts, nil))
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	err = tc.HandshakeContext(ctx)
	took := time.Since(start)
	t.Logf("handshake: %v after %v", err, took)
	if err == nil {
		t.Fatal("a trickled handshake completed")
	}
	if errors.Is(err, context.DeadlineExceeded) || took >= 4*time.Second {
		t.Fatalf("the server did not cut a handshake still trickling after %v (handshake timeout 300ms): %v", took, err)
	}
	select {
	case r := <-remotes:
		t.Fatalf("handler called from %v", r)
	default:
	}
}

// handshakeGoroutines counts the goroutines running a server's TLS handshake.
func handshakeGoroutines() int {
	buf := make([]byte, 1<<22)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "tlsconn.StartServer.func")
}

// TestServerStopDuringHandshakes: 20 clients that connect and never send a byte, and 5
// that send half a ClientHello, each holding a handshake goroutine for up to the default 10 s
// handshake timeout: Stop ends them and returns at once, and no goroutine is left.
func TestServerStopDuringHandshakes(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	s, addr, _ := startTLSServer(t, ts, false)
	base := handshakeGoroutines()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range 25 {
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if i >= 20 {
			_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00}) // a record header, 2 bytes of a 256-byte hello
		}
	}
	eventually(t, "25 handshakes under way", func() bool { return handshakeGoroutines()-base >= 25 })
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Stop took %v with handshakes under way (handshake timeout 10s): it waited for them", took)
	}
	if n := handshakeGoroutines(); n != 0 {
		t.Fatalf("%d handshake goroutines after Stop", n)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(testTimeout))
		if _, err := io.ReadAll(c); err != nil && !isReset(err) {
			t.Fatalf("connection %d after Stop: %v, want it closed", i, err)
		}
	}
}

// TestServerIdleCutsUnauthenticated: with WithIdleTimeout, a connection that never sends
// its auth request, over tcp and after a complete TLS handshake, is closed like any idle one.
func TestServerIdleCutsUnauthenticated(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	keys := func(ak string) (string, bool) { return "sk", ak == "ak" }
	for _, proto := range []string{"tcp", "ssl"} {
		t.Run(proto, func(t *testing.T) {
			var c *client
			if proto == "ssl" {
				_, addr, _ := startTLSServer(t, ts, false, WithAuth(keys), WithIdleTimeout(300*time.Millisecond))
				c = dialTLS(t, addr, clientConfig(t, ts, nil))
				if err := c.c.(*tls.Conn).Handshake(); err != nil {
					t.Fatal(err)
				}
			} else {
				addr := startAuthServer(t, WithIdleTimeout(300*time.Millisecond))
				c = dial(t, addr)
			}
			start := time.Now()
			c.expectClosed()
			t.Logf("closed after %v", time.Since(start))
		})
	}
}

// TestServerAuthAndCallsInOneRecord: right after the TLS handshake a client writes the auth
// request and two calls in one TLS record; another writes its auth request one byte per record.
// Both are answered AUTH_SUCC and then served, in order; a second auth request on an
// authenticated connection does not close it.
func TestServerAuthAndCallsInOneRecord(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	keys := func(ak string) (string, bool) { return "sk", ak == "ak" }
	_, addr, _ := startTLSServer(t, ts, false, WithAuth(keys))
	authFrame, err := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := clientConfig(t, ts, nil)
		cfg.MaxVersion = version
		c := dialTLS(t, addr, cfg)
		b := append(append([]byte(nil), authFrame...), codec.AppendRequest(nil, request(2, "App.S.Obj", "echo", []byte("one")))...)
		b = codec.AppendRequest(b, request(3, "App.S.Obj", "echo", []byte("two")))
		c.write(b) // one record: it may arrive with the client's Finished
		f, err := c.readFrame(testTimeout)
		if err != nil || auth.CheckResponse(f) != nil {
			t.Fatalf("TLS %x: auth answer %x, %v", version, f, err)
		}
		for _, want := range []string{"one", "two"} {
			if rsp := c.recv(); string(rsp.Buffer) != want {
				t.Fatalf("TLS %x: reply %q, want %q", version, rsp.Buffer, want)
			}
		}
		// A second auth request: not a new authentication, but not a reason to hang up.
		c.write(authFrame)
		if rsp := c.recv(); rsp.RequestID != auth.RequestID {
			t.Fatalf("TLS %x: answer to a second auth request: %+v", version, rsp)
		}
		if rsp := c.call(request(4, "App.S.Obj", "echo", []byte("three"))); string(rsp.Buffer) != "three" {
			t.Fatalf("TLS %x: call after a second auth request: %+v", version, rsp)
		}
	}

	c := dialTLS(t, addr, clientConfig(t, ts, nil))
	for i := range authFrame {
		c.write(authFrame[i : i+1]) // a record per byte
	}
	f, err := c.readFrame(testTimeout)
	if err != nil || auth.CheckResponse(f) != nil {
		t.Fatalf("auth request a byte per record: %x, %v", f, err)
	}
	if rsp := c.call(request(5, "App.S.Obj", "echo", []byte("four"))); string(rsp.Buffer) != "four" {
		t.Fatalf("call: %+v", rsp)
	}
}

// slowConn reads at most chunk bytes per pause.
type slowConn struct {
	net.Conn
	chunk int
	pause time.Duration
}

func (c *slowConn) Read(p []byte) (int, error) {
	time.Sleep(c.pause)
	return c.Conn.Read(p[:min(len(p), c.chunk)])
}

// TestServerLargeRepliesSlowTLSClient: 1, 4 and 8 MiB requests pipelined over TLS by a
// client that reads its replies 64 KiB per millisecond: every reply arrives whole, in order.
func TestServerLargeRepliesSlowTLSClient(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	_, addr, _ := startTLSServer(t, ts, false, WithMaxPacketSize(16<<20))
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr, clientConfig(t, ts, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sizes := []int{1 << 20, 4 << 20, 8 << 20}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, n := range sizes {
			_ = nc.SetWriteDeadline(time.Now().Add(largeTimeout))
			if _, err := nc.Write(codec.AppendRequest(nil, request(int32(i+1), "App.S.Obj", "echo", bytes.Repeat([]byte{byte('a' + i)}, n)))); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	})
	_ = nc.SetReadDeadline(time.Now().Add(largeTimeout))
	fr := codec.NewFrameReader(&slowConn{Conn: nc, chunk: 64 << 10, pause: time.Millisecond}, 16<<20)
	for i, n := range sizes {
		f, err := fr.Next()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if rsp.RequestID != int32(i+1) || !bytes.Equal(rsp.Buffer, bytes.Repeat([]byte{byte('a' + i)}, n)) {
			t.Fatalf("reply %d: id %d, %d bytes; want id %d, %d bytes of %c", i, rsp.RequestID, len(rsp.Buffer), i+1, n, 'a'+i)
		}
	}
	wg.Wait()
}

// TestServerPushTLSClientGone: a handler's Pusher over TLS pushes 64 KiB packets from its
// own goroutine while the client reads a few and then goes away: Push ends with ErrConnClosed
// (or ErrPushBacklog while the connection dies) and then ErrConnClosed for good, Stop returns,
// and no goroutine is left.
func TestServerPushTLSClientGone(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	cfg, err := tlsServerConfig(ts)
	if err != nil {
		t.Fatal(err)
	}
	pushers := make(chan *Pusher, 1)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "sub", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			pushers <- cur.Pusher()
			return rsp, nil
		})
	}, WithTLS(cfg), WithNumEventLoop(1))
	c := dialTLS(t, addr, clientConfig(t, ts, nil))
	c.call(request(1, "App.S.Obj", "sub", nil))
	pu := <-pushers
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		body := bytes.Repeat([]byte("p"), 64<<10)
		for {
			err := pu.Push("Tick", body)
			if errors.Is(err, ErrConnClosed) {
				done <- nil
				return
			}
			if err != nil && !errors.Is(err, ErrPushBacklog) {
				done <- err
				return
			}
			select {
			case <-stop:
				done <- errors.New("still pushing when the test gave up")
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	for range 20 {
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("push: %v", err)
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil || rsp.RequestID != codec.PushRequestID || len(rsp.Buffer) != 64<<10 {
			t.Fatalf("push: id %d, %d bytes, %v", rsp.RequestID, len(rsp.Buffer), err)
		}
	}
	_ = c.c.(*tls.Conn).NetConn().Close() // gone, without close_notify
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		close(stop)
		t.Fatalf("Push did not report the closed connection within %v: %v", testTimeout, <-done)
	}
	if !pu.Closed() {
		t.Fatal("Pusher.Closed is false after ErrConnClosed")
	}
}

func tlsServerConfig(ts *tlsSetup) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(ts.server.Cert, ts.server.Key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
