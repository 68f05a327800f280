package communicator_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// Issue 16 item 5 (a call never succeeds after its deadline) and item 9 (a peer that speaks
// HTTP or TLS to a TARS client is named as such), end to end.

// lateGreeter is a server whose SayHello answers after a fixed delay whatever the call's
// deadline (it does not look at its context), so its replies reach the client after the call's
// deadline. It counts the replies it sent to this process's clients.
type lateGreeter struct {
	addr     string
	answered atomic.Int64
}

func startLateGreeter(t *testing.T, delay time.Duration) *lateGreeter {
	t.Helper()
	endToEnd(t)
	g := &lateGreeter{}
	release := make(chan struct{})
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-late")),
		server.WithNumEventLoop(1), server.WithWorkers(128))
	err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		tm := time.NewTimer(delay)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-release: // the test is over
			return nil, errors.New("released")
		}
		if ownCaller(cur) {
			g.answered.Add(1)
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@late", Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = a.String()
	t.Cleanup(func() {
		close(release)
		if err := stopServer(t, "late server", s); err != nil {
			t.Logf("stop late server: %v", err)
		}
	})
	return g
}

// TestNoSuccessAfterDeadline (item 5): replies that arrive 30ms after their call's deadline,
// while the timing wheel's ticker (timeout-check-interval = 1s) cannot have expired the calls,
// must not be delivered as successes: every sync, async and future call ends with ErrTimeout.
// Control calls with a deadline past the delay succeed on the same connection, so the server
// does answer. Before the fix the late replies were delivered as successes.
func TestNoSuccessAfterDeadline(t *testing.T) {
	const (
		timeout = 100 * time.Millisecond
		delay   = timeout + 30*time.Millisecond
		perKind = 20
	)
	g := startLateGreeter(t, delay)
	c := newComm(t, func(cfg *conf.Config) {
		cfg.NetThread = 1
		cfg.TimeoutCheckInterval = time.Second // the ticker cannot expire the calls in time
	})
	sp := proxyToAddrs(t, c, tcpEndpoint(g.addr))
	ctx := testCtx(t)

	// Control: the server answers, and the connection is up before the measured calls.
	for i := range 3 {
		if _, err := sayHello(ctx, sp, "control", uint64(i), servantproxy.WithTimeout(5*time.Second)); err != nil {
			t.Fatalf("control call %d with a 5s timeout: %v", i, err)
		}
	}

	kinds := []string{"sync", "async", "future"}
	var (
		mu       sync.Mutex
		outcomes = map[string]map[string]int{} // kind -> outcome -> count
		late     []string
		wg       sync.WaitGroup
	)
	record := func(kind string, seq uint64, err error, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if outcomes[kind] == nil {
			outcomes[kind] = map[string]int{}
		}
		switch {
		case err == nil:
			outcomes[kind]["success"]++
			late = append(late, fmt.Sprintf("%s call %d succeeded after %v (deadline %v)", kind, seq, took, timeout))
		case errors.Is(err, communicator.ErrTimeout):
			outcomes[kind]["ErrTimeout"]++
		default:
			outcomes[kind][err.Error()]++
		}
	}
	opts := withTimeout(timeout)
	for k, kind := range kinds {
		for i := range perKind {
			seq := uint64(100*(k+1) + i)
			wg.Go(func() {
				start := time.Now()
				var err error
				switch kind {
				case "sync":
					_, err = sayHello(ctx, sp, kind, seq, opts...)
				case "async":
					done, aerr := asyncHello(t, ctx, sp, kind, seq, opts...)
					if aerr != nil {
						err = fmt.Errorf("AsyncInvoke refused: %w", aerr)
						break
					}
					err = waitErr(done, live, fmt.Sprintf("async call %d", seq))
				case "future":
					rsp := new(hellopb.HelloReply)
					f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: kind, Seq: seq}, rsp, opts...)
					gctx, cancel := context.WithTimeout(ctx, live)
					defer cancel()
					if _, err = f.Get(gctx); err == nil {
						_, err = checkReply(rsp, kind, seq)
					} else if gctx.Err() != nil && !f.Done() {
						err = fmt.Errorf("future call %d: %w", seq, errHang)
					}
				}
				record(kind, seq, err, time.Since(start))
			})
		}
	}
	wg.Wait()

	// Every call reached the server and was answered (late): the client saw the replies.
	eventually(t, live, "the server answering every call", func() bool {
		return g.answered.Load() >= int64(3+len(kinds)*perKind)
	})
	t.Logf("outcomes by kind: %v; server replies: %d", outcomes, g.answered.Load())
	for _, l := range late {
		t.Error(l)
	}
	for _, kind := range kinds {
		if n := outcomes[kind]["ErrTimeout"]; n != perKind {
			t.Errorf("%s: %d of %d calls ended with ErrTimeout, want all (outcomes %v)", kind, n, perKind, outcomes[kind])
		}
	}
}

// foreignCall makes one sync and one async call to sp, which points at a peer that does not
// speak TARS, and returns their errors; each must fail.
func foreignCall(t *testing.T, sp *servantproxy.ServantProxy) []error {
	t.Helper()
	ctx := testCtx(t)
	var errs []error
	for i, kind := range []callKind{syncCall, asyncCall} {
		err := callOnce(t, ctx, kind, sp, uint64(i), live, servantproxy.WithTimeout(quick))
		if err == nil {
			t.Fatalf("%s call to a peer that does not speak TARS succeeded", kind)
		}
		if errors.Is(err, errHang) {
			t.Fatalf("%s call: %v", kind, err)
		}
		errs = append(errs, err)
	}
	return errs
}

// TestHTTPPeerNamed (item 9a): a tcp endpoint whose peer answers HTTP fails the calls with an
// error that says HTTP, not "frame length too large: 1213486160". Two peers: a net/http server
// (it answers a TARS frame with 400 Bad Request) and a raw listener writing a status line.
func TestHTTPPeerNamed(t *testing.T) {
	endToEnd(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(hs.Close)
	raw := startRawListener(t, func(c net.Conn) {
		buf := make([]byte, 64)
		_, _ = c.Read(buf) // the request's first bytes
		_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request")
		// keep the connection open: the client must act on the bytes, not on a close
		buf2 := make([]byte, 1024)
		for {
			if _, err := c.Read(buf2); err != nil {
				return
			}
		}
	})
	c := newComm(t, faultConf(nil))
	for name, addr := range map[string]string{"net/http": hs.Listener.Addr().String(), "raw": raw} {
		sp := proxyToAddrs(t, c, tcpEndpoint(addr))
		for _, err := range foreignCall(t, sp) {
			t.Logf("%s peer: %v", name, err)
			if !strings.Contains(err.Error(), "HTTP") {
				t.Errorf("%s peer: err = %v, want it to say the peer speaks HTTP", name, err)
			}
			if !errors.Is(err, communicator.ErrConnection) {
				t.Errorf("%s peer: err = %v, want ErrConnection", name, err)
			}
		}
	}
}

// TestTCPToTLSServerNamed (item 9b): a tcp endpoint pointed at a crypto/tls server fails the
// calls with an error that mentions TLS (the server hangs up without a byte: it read a TARS
// frame where a ClientHello should be).
func TestTCPToTLSServerNamed(t *testing.T) {
	endToEnd(t)
	p := newTLSPKI(t)
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: p.server.Cert, Key: p.server.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	addr := startRawListener(t, func(nc net.Conn) {
		tc := tls.Server(nc, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), live)
		defer cancel()
		if err := tc.HandshakeContext(ctx); err == nil {
			t.Errorf("a plain TCP client completed a TLS handshake")
		}
	})
	c := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, c, tcpEndpoint(addr))
	for _, err := range foreignCall(t, sp) {
		t.Logf("tcp endpoint to a TLS server: %v", err)
		if !strings.Contains(err.Error(), "TLS") {
			t.Errorf("err = %v, want it to mention TLS", err)
		}
		if !errors.Is(err, communicator.ErrConnection) {
			t.Errorf("err = %v, want ErrConnection", err)
		}
	}
}

// TestTLSPeerSilentCloseNamed (item 9c): an ssl endpoint whose peer completes the handshake and
// then closes the TCP connection without an alert or a byte of plaintext (TarsCpp refusing a
// client certificate: it asked for one) fails the calls with a TLS error (ErrTLS, the message
// mentions TLS and says the peer closed right after the handshake). Before the fix: a bare EOF.
// (A server that asked for no certificate and closes so is a lost connection:
// TestTLSServerCrashIsNotTLSFailure.)
func TestTLSPeerSilentCloseNamed(t *testing.T) {
	endToEnd(t)
	p := newTLSPKI(t)
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: p.server.Cert, Key: p.server.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientAuth = tls.RequestClientCert // asks, and the client has none to give
	var handshakes atomic.Int64
	addr := startRawListener(t, func(nc net.Conn) {
		tc := tls.Server(nc, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), live)
		defer cancel()
		if err := tc.HandshakeContext(ctx); err != nil {
			t.Errorf("silent TLS server: handshake: %v", err)
			return
		}
		handshakes.Add(1)
		// return: startRawListener closes nc, the TCP connection, with no close_notify
	})
	c := tlsComm(t, tomlTLS(p.ca.File), nil)
	sp := sslProxy(t, c, servant, addr)
	for _, err := range foreignCall(t, sp) {
		t.Logf("ssl endpoint closed after the handshake: %v", err)
		if !errors.Is(err, communicator.ErrTLS) {
			t.Errorf("err = %v, want ErrTLS", err)
		}
		if !strings.Contains(strings.ToLower(err.Error()), "tls") || !strings.Contains(err.Error(), "after the handshake") {
			t.Errorf("err = %v, want it to mention TLS and say the peer closed after the handshake", err)
		}
	}
	if handshakes.Load() == 0 {
		t.Errorf("no handshake completed: the calls did not fail the way this test means")
	}
}

// startRawListener accepts TCP connections on loopback and runs serve on each in its own
// goroutine, closing the connection when serve returns; t.Cleanup closes the listener and the
// connections and waits for the goroutines. It returns the listener's host:port.
func startRawListener(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	return serveRaw(t, listenLoopback(t), func(_ int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		serve(c)
	}).addr()
}
