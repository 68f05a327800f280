package faultproxy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/internal/faultproxy"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(foreignDialEnv); addr != "" {
		foreignClient(addr)
		return
	}
	goleak.VerifyTestMain(m)
}

// foreignDialEnv makes the test binary a client of another process: it dials the address in
// the variable, writes a few bytes, reads until the connection ends and exits.
const foreignDialEnv = "FAULTPROXY_TEST_FOREIGN_DIAL"

func foreignClient(addr string) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	defer func() { _ = c.Close() }()
	_, _ = c.Write([]byte("from another process"))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := io.Copy(io.Discard, c)
	fmt.Printf("read %d bytes: %v\n", n, err)
}

// TestForeignConnectionsNotCounted: a client of another process that dials a Proxy (or an
// upstream of this test) is reset, counted as Foreign only, and none of its bytes reach the
// upstream; a client of this process is forwarded.
func TestForeignConnectionsNotCounted(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	for _, addr := range []string{p.Addr(), e.addr()} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), foreignDialEnv+"="+addr)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("foreign client of %s: %v\n%s", addr, err, out)
		}
		t.Logf("foreign client of %s: %s", addr, bytes.TrimSpace(out))
		if bytes.Contains(out, []byte("read 2")) { // "read 20 bytes": the echo came back
			t.Errorf("the foreign client of %s got its bytes echoed: %s", addr, out)
		}
	}
	st := p.Stats()
	if st.Foreign != 1 || st.Accepts != 0 || st.Forwarded != 0 || st.BytesUp != 0 {
		t.Fatalf("stats %+v: want 1 foreign connection and nothing accepted or forwarded", st)
	}
	if got := e.received.Load(); got != 0 {
		t.Fatalf("the upstream counted %d bytes of foreign clients, want 0", got)
	}
	// This process's own client is forwarded.
	c := dial(t, p.Addr())
	if got, err := roundTrip(c, []byte("own"), 5*time.Second); err != nil || string(got) != "own" {
		t.Fatalf("own client: got %q, %v", got, err)
	}
	if st := p.Stats(); st.Accepts != 1 || st.Foreign != 1 {
		t.Fatalf("stats %+v: want 1 accept and 1 foreign", st)
	}
}

// TestFromThisProcess: a connection this process dialled is its own while its client socket is
// open; once that socket is closed it cannot tell (not foreign); a connection that does not
// exist is not this process's.
func TestFromThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	client, server := s.RemoteAddr().String(), s.LocalAddr().String()
	if !faultproxy.FromThisProcess(client, server) || !faultproxy.FromThisProcess(client, "") {
		t.Fatalf("FromThisProcess(%s, %s or \"\") = false for a connection this process dialled", client, server)
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp: FromThisProcess cannot tell")
	}
	// Once the client closed its socket, the socket has no owner left to look at (FIN_WAIT,
	// inode 0): it cannot tell, and does not call it foreign — a short connection of this
	// process closes before a proxy gets to look, and resetting it would drop this process's call.
	_ = c.Close()
	if !faultproxy.FromThisProcess(client, server) || !faultproxy.FromThisProcess(client, "") {
		t.Fatalf("FromThisProcess(%s, %s or \"\") = false after the client closed its socket: it cannot tell then", client, server)
	}
	if faultproxy.FromThisProcess("127.0.0.1:1", server) {
		t.Fatalf("FromThisProcess is true for a connection that does not exist")
	}
}

// echoServer is an upstream that echoes everything and counts the bytes it received from
// clients of this process (those of another process are closed unread).
type echoServer struct {
	ln       net.Listener
	received atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	e.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !faultproxy.FromThisProcess(c.RemoteAddr().String(), c.LocalAddr().String()) {
				_ = c.Close() // another process's client that dialled this port: not this test's bytes
				continue
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Go(func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					e.received.Add(int64(n))
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						_ = c.Close()
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		e.mu.Lock()
		for _, c := range e.conns {
			_ = c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

func (e *echoServer) addr() string { return e.ln.Addr().String() }

func newProxy(t *testing.T, upstream string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads len(msg) bytes back within limit.
func roundTrip(c net.Conn, msg []byte, limit time.Duration) ([]byte, error) {
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(limit))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	got := make([]byte, len(msg))
	_, err := io.ReadFull(c, got)
	return got, err
}

// eventually polls cond every 5ms until it holds or limit passes.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
	}
}

func TestPassThrough(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	msg := bytes.Repeat([]byte("hello "), 10000) // several chunks
	got, err := roundTrip(c, msg, 5*time.Second)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("round trip: err = %v, %d bytes equal = %v; want the %d bytes back", err, len(got), bytes.Equal(got, msg), len(msg))
	}
	st := p.Stats()
	if st.Accepts != 1 || st.Forwarded != 1 || st.Active != 1 {
		t.Fatalf("stats %+v: want 1 accept, 1 forwarded, 1 active", st)
	}
	// A writer counts its bytes once Write returns, which may be after the client read them.
	eventually(t, time.Second, "bytes counted", func() bool {
		st := p.Stats()
		return st.BytesUp == int64(len(msg)) && st.BytesDown == int64(len(msg))
	})
	host, port := p.HostPort()
	if net.JoinHostPort(host, port) != p.Addr() || host != "127.0.0.1" {
		t.Fatalf("HostPort = %s %s, Addr = %s", host, port, p.Addr())
	}
	_ = c.Close()
	eventually(t, time.Second, "client close seen", func() bool {
		st := p.Stats()
		return st.ClientCloses == 1 && st.Active == 0
	})
}

// TestDelay: a delay holds each chunk at least that long each way; once lifted, a round trip is
// no longer held (bounded by the delay, so load cannot make it look held when it is not: a held
// round trip takes 2d).
func TestDelay(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	const d = time.Second
	p.SetDelay(d)
	start := time.Now()
	if _, err := roundTrip(c, []byte("x"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Delayed up and down; a busy machine only makes it later.
	if took := time.Since(start); took < 2*d {
		t.Fatalf("round trip with delay %v each way took %v, want at least %v", d, took, 2*d)
	}
	p.SetDelay(0)
	start = time.Now()
	if _, err := roundTrip(c, []byte("y"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 2*d {
		t.Fatalf("round trip without delay took %v, as long as a delayed one", took)
	}
}

func TestBlackHole(t *testing.T) {
	for _, tt := range []struct {
		dir          faultproxy.Direction
		wantUpstream bool // the echo server receives the bytes
	}{
		{dir: faultproxy.Both, wantUpstream: false},
		{dir: faultproxy.Up, wantUpstream: false},
		{dir: faultproxy.Down, wantUpstream: true},
	} {
		t.Run(tt.dir.String(), func(t *testing.T) {
			e := startEcho(t)
			p := newProxy(t, e.addr())
			c := dial(t, p.Addr())
			if _, err := roundTrip(c, []byte("a"), 5*time.Second); err != nil {
				t.Fatal(err)
			}
			p.BlackHole(tt.dir)
			_, err := roundTrip(c, []byte("bcd"), 150*time.Millisecond)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read through a black hole: err = %v, want a read timeout", err)
			}
			// The bytes go as far as the black hole: the proxy drops all 3 (up, or down once
			// the upstream echoed them), and only a black hole on Down lets them reach the
			// upstream. The read above timing out says nothing about how far they got on a busy
			// machine: wait for the drop to be counted.
			eventually(t, 5*time.Second, "the 3 black-holed bytes dropped", func() bool {
				st := p.Stats()
				return st.DroppedUp+st.DroppedDown == 3
			})
			if got, want := e.received.Load() == 4, tt.wantUpstream; got != want {
				t.Fatalf("upstream received %d bytes; want the black-holed bytes to arrive: %v", e.received.Load(), want)
			}
			// Foreign is not asserted: under make test another package's client may dial this
			// port (a port its server held before), and the proxy counts and resets it.
			if st := p.Stats(); st.DroppedUp+st.DroppedDown != 3 {
				t.Fatalf("dropped up %d + down %d, want 3", st.DroppedUp, st.DroppedDown)
			}
			// Healthy again: the same connection forwards.
			if err := p.Pass(); err != nil {
				t.Fatal(err)
			}
			got, err := roundTrip(c, []byte("ef"), 5*time.Second)
			if err != nil || string(got) != "ef" {
				t.Fatalf("after Pass: got %q, %v; want \"ef\"", got, err)
			}
		})
	}
}

func TestStall(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	p.Stall(faultproxy.Up)
	// Writes block once the socket buffers are full.
	buf := make([]byte, 1<<20)
	_ = c.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
	total := 0
	var err error
	for total < 256<<20 && err == nil {
		var n int
		n, err = c.Write(buf)
		total += n
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writing into a stalled proxy: wrote %d bytes, err = %v; want a write timeout", total, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	if got := e.received.Load(); got > int64(total) {
		t.Fatalf("upstream received %d bytes of %d", got, total)
	}
	// Pass: everything flows again; read the echo of all of it.
	if err := p.Pass(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, total)); err != nil {
		t.Fatalf("reading the %d bytes back after Pass: %v", total, err)
	}
}

func TestCut(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c1, c2 := dial(t, p.Addr()), dial(t, p.Addr())
	for _, c := range []net.Conn{c1, c2} {
		if _, err := roundTrip(c, []byte("a"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Cut(); n != 2 {
		t.Fatalf("Cut() = %d, want 2", n)
	}
	_ = c1.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c1.Read(make([]byte, 1))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read on a cut connection: err = %v, want ECONNRESET", err)
	}
	st := p.Stats()
	if st.Cuts != 2 || st.Active != 0 || st.ClientCloses != 0 {
		t.Fatalf("stats %+v: want 2 cuts, 0 active, 0 client closes", st)
	}
	// New connections are forwarded.
	c3 := dial(t, p.Addr())
	if _, err := roundTrip(c3, []byte("b"), 5*time.Second); err != nil {
		t.Fatalf("after Cut: %v", err)
	}
}

func TestRefuse(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())

	if err := p.Refuse(faultproxy.Reset); err != nil {
		t.Fatal(err)
	}
	// The kernel completes the handshake and the proxy resets at once: the client's connect
	// fails with ECONNRESET, or, if it completed first, its first read does.
	if c, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		_ = c.Close()
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read on a connection refused with Reset: err = %v, want ECONNRESET", err)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("dial a proxy refusing with Reset: err = %v, want ECONNRESET", err)
	}
	if st := p.Stats(); st.Accepts != 1 || st.Refused != 1 || st.Forwarded != 0 {
		t.Fatalf("stats %+v: want 1 accept, 1 refused, 0 forwarded", st)
	}

	if err := p.Refuse(faultproxy.Closed); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial with the listener closed: err = %v, want ECONNREFUSED", err)
	}
	if err := p.Refuse(faultproxy.Closed); err != nil {
		t.Fatalf("second Refuse(Closed): %v", err)
	}

	if err := p.Pass(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("back"), 5*time.Second); err != nil {
		t.Fatalf("after Pass: %v", err)
	}
	if st := p.Stats(); st.Accepts != 2 || st.Forwarded != 1 {
		t.Fatalf("stats %+v: want 2 accepts, 1 forwarded", st)
	}
}

func TestCorruptNext(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	p.CorruptNext([]byte("GARBAGE"), false)
	got, err := roundTrip(c, []byte("fine"), 5*time.Second) // reads 4 of the 7 bytes
	if err != nil || string(got) != "GARB" {
		t.Fatalf("got %q, %v; want the replacement", got, err)
	}
	rest := make([]byte, 3)
	if _, err := io.ReadFull(c, rest); err != nil || string(rest) != "AGE" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	// One shot: the next reply passes.
	if got, err := roundTrip(c, []byte("okay"), 5*time.Second); err != nil || string(got) != "okay" {
		t.Fatalf("after the corruption: got %q, %v", got, err)
	}

	// With closeAfter the client reads the replacement, then EOF.
	p.CorruptNext([]byte{0, 0, 1, 0, 1, 2}, true)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	all, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(all, []byte{0, 0, 1, 0, 1, 2}) {
		t.Fatalf("read %v, %v; want the replacement then EOF", all, err)
	}
}

func TestBlackHoledReplacementStillSent(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	p.BlackHole(faultproxy.Down)
	p.CorruptNext([]byte("zz"), false)
	got, err := roundTrip(c, []byte("ab"), 5*time.Second)
	if err != nil || string(got) != "zz" {
		t.Fatalf("got %q, %v; want the replacement through the black hole", got, err)
	}
}

func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	p := newProxy(t, dead)
	// The proxy accepts, fails to dial the upstream and resets: the client's connect or its
	// first read fails.
	if c, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(make([]byte, 1))
		_ = c.Close()
		if err == nil {
			t.Fatal("read through a proxy whose upstream is down succeeded")
		}
	}
	eventually(t, time.Second, "upstream failure counted", func() bool { return p.Stats().UpstreamFails == 1 })

	// A new upstream takes new connections.
	e := startEcho(t)
	p.SetUpstream(e.addr())
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("up"), 5*time.Second); err != nil {
		t.Fatalf("after SetUpstream: %v", err)
	}
}

func TestServerCloseForwardsPendingBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte("last words"))
		_ = c.Close()
	})
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	p := newProxy(t, ln.Addr().String())
	p.SetDelay(50 * time.Millisecond)
	c := dial(t, p.Addr())
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	all, err := io.ReadAll(c)
	if err != nil || string(all) != "last words" {
		t.Fatalf("read %q, %v; want the server's bytes then EOF", all, err)
	}
	eventually(t, time.Second, "server close counted", func() bool { return p.Stats().ServerCloses == 1 })
}

// TestCloseStopsEverything closes a Proxy with connections in every state; TestMain's goleak
// check proves its goroutines are gone.
func TestCloseStopsEverything(t *testing.T) {
	e := startEcho(t)
	p, err := faultproxy.New(e.addr())
	if err != nil {
		t.Fatal(err)
	}
	c1 := dial(t, p.Addr())
	if _, err := roundTrip(c1, []byte("a"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.SetDelay(time.Hour)
	_, _ = c1.Write([]byte("held for an hour"))
	c2 := dial(t, p.Addr())
	p.Stall(faultproxy.Both)
	_, _ = c2.Write([]byte("stalled"))
	time.Sleep(20 * time.Millisecond)

	done := make(chan struct{})
	go func() {
		_ = p.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := p.Refuse(faultproxy.Accept); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Refuse after Close: %v, want net.ErrClosed", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("a closed proxy still accepts")
	}
}

func TestListenStalled(t *testing.T) {
	s, err := faultproxy.ListenStalled()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
	if err == nil {
		_ = c.Close()
		t.Fatal("connect to a stalled listener succeeded")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("connect to a stalled listener: err = %v, want a timeout", err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("connect failed after %v, want it to hang until its timeout", took)
	}
}
