package communicator_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// TestTLSCalls: sync, async and one-way calls over ssl endpoints to TLS 1.2 and TLS 1.3
// servers, with the server name verified against the endpoint's -h (an IP address here).
func TestTLSCalls(t *testing.T) {
	p := newTLSPKI(t)
	for _, v := range []struct {
		name string
		max  uint16
	}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}} {
		t.Run(v.name, func(t *testing.T) {
			g := startTLSGreeter(t, p, "tls", tlsServerOpt{pair: p.server, maxVersion: v.max})
			c := tlsComm(t, tomlTLS(p.ca.File), nil)
			sp := sslProxy(t, c, servant, g.addr)
			ctx := testCtx(t)
			for i := range uint64(20) {
				for _, kind := range []callKind{syncCall, asyncCall, onewayCall} {
					if err := callOnce(t, ctx, kind, sp, i, 10*time.Second); err != nil {
						t.Fatalf("%s call %d: %v", kind, i, err)
					}
				}
			}
		})
	}
}

// TestTLSMutual: a server requiring client certificates serves a client configured with cert
// and key, and refuses one without: its calls fail at once with ErrTLS and ErrConnection, and
// the error names the endpoint and says the certificate was required.
func TestTLSMutual(t *testing.T) {
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "mtls", tlsServerOpt{pair: p.server, mutual: true})
	ctx := testCtx(t)

	good := tlsComm(t, tomlTLS(p.ca.File, fmt.Sprintf("cert = %q\nkey = %q", p.user.Cert, p.user.Key)), nil)
	if _, err := sayHello(ctx, sslProxy(t, good, servant, g.addr), "mtls", 1); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}

	for _, v := range []struct {
		name string
		max  string // the client's highest version
		want string
	}{{"TLS1.3", "", "certificate required"}, {"TLS1.2", "1.2", "handshake failure"}} {
		t.Run(v.name, func(t *testing.T) {
			bad := tlsComm(t, tomlTLS(p.ca.File), nil)
			sp := sslProxy(t, bad, servant, g.addr)
			if v.max != "" {
				// A TLS 1.2 server refuses during the handshake; the test pins it there
				// through a second server.
				g12 := startTLSGreeter(t, p, "mtls12", tlsServerOpt{pair: p.server, mutual: true, maxVersion: tls.VersionTLS12})
				sp = sslProxy(t, bad, servant+"12", g12.addr)
			}
			start := time.Now()
			_, err := sayHello(ctx, sp, "nocert", 1)
			took := time.Since(start)
			t.Log(err)
			checkTLSError(t, err, v.want)
			within(t, "the refused call", took, quick)
			if !strings.Contains(err.Error(), "127.0.0.1:") {
				t.Fatalf("error %q does not name the endpoint", err)
			}
		})
	}
}

// checkTLSError fails t unless err matches ErrTLS and ErrConnection and mentions want.
func checkTLSError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("call succeeded, want a TLS failure (%s)", want)
	}
	if !errors.Is(err, tlsconn.ErrTLS) || !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("error %q: want ErrTLS and ErrConnection", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// TestTLSFailures: each way a TLS connect goes wrong fails its calls within connect-timeout,
// with an error that names the endpoint and the cause and matches ErrTLS, and counts as a
// failed connect (the next call within the backoff fails at once, without dialling).
func TestTLSFailures(t *testing.T) {
	p := newTLSPKI(t)
	plain := startGreeter(t, "plain", serverOpt{})
	hold := startHold(t)
	cases := []struct {
		name string
		addr func(t *testing.T) string
		toml string
		want []string // each must appear in the error
	}{
		{"unknown CA", func(t *testing.T) string {
			return startTLSGreeter(t, p, "s", tlsServerOpt{pair: p.server}).addr
		}, tomlTLS(p.other.File), []string{"certificate signed by unknown authority", "not signed by a configured ca"}},
		{"expired certificate", func(t *testing.T) string {
			return startTLSGreeter(t, p, "s", tlsServerOpt{pair: p.expired}).addr
		}, tomlTLS(p.ca.File), []string{"expired"}},
		{"certificate for another host", func(t *testing.T) string {
			return startTLSGreeter(t, p, "s", tlsServerOpt{pair: p.elsewhere}).addr
		}, tomlTLS(p.ca.File), []string{"127.0.0.1", "not for this host"}},
		{"server name set and mismatched", func(t *testing.T) string {
			return startTLSGreeter(t, p, "s", tlsServerOpt{pair: p.server}).addr
		}, tomlTLS(p.ca.File, `server-name = "other.example"`), []string{"other.example"}},
		{"plain TCP server", func(*testing.T) string { return plain.addr }, tomlTLS(p.ca.File), []string{"may not speak TLS"}},
		{"stalled handshake", func(*testing.T) string { return hold.ln.Addr().String() }, tomlTLS(p.ca.File),
			[]string{"did not complete within", "does it speak TLS"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := tc.addr(t)
			c := tlsComm(t, tc.toml, func(cfg *conf.Config) { cfg.ConnectTimeout = 400 * time.Millisecond })
			sp := sslProxy(t, c, servant, addr)
			ctx := testCtx(t)
			for _, kind := range []callKind{syncCall, asyncCall} {
				start := time.Now()
				err := callOnce(t, ctx, kind, sp, 1, 10*time.Second)
				took := time.Since(start)
				t.Logf("%s call: %v", kind, err)
				if kind == asyncCall && !strings.Contains(err.Error(), "not reconnecting yet") {
					// The failed handshake counted as a failed connect: the call right after
					// it, within the reconnect backoff, is refused without a dial, and says why
					// the last dial failed.
					t.Fatalf("async call right after the failed connect: %v, want it refused during the backoff", err)
				}
				if !errors.Is(err, tlsconn.ErrTLS) {
					t.Fatalf("%s call: %v, want ErrTLS", kind, err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("%s call: error %q does not say %q", kind, err, w)
					}
				}
				if !strings.Contains(err.Error(), addr) {
					t.Fatalf("%s call: error %q does not name %s", kind, err, addr)
				}
				within(t, fmt.Sprintf("%s call (within connect-timeout)", kind), took, 400*time.Millisecond+time.Second)
			}
		})
	}
}

// TestTLSServantOverride: a servant's own ca replaces the communicator's for its endpoints only.
func TestTLSServantOverride(t *testing.T) {
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "o", tlsServerOpt{pair: p.server})
	c := tlsComm(t, tomlTLS(p.ca.File, fmt.Sprintf("[servant.\"Test.Other.Obj\"]\nca = %q", p.other.File)), nil)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sslProxy(t, c, servant, g.addr), "o", 1); err != nil {
		t.Fatalf("servant with the communicator's ca: %v", err)
	}
	_, err := sayHello(ctx, sslProxy(t, c, "Test.Other.Obj", g.addr), "o", 2)
	checkTLSError(t, err, "unknown authority")
}

// TestTLSDeadlineAndClose: on TLS connections calls still end by their deadline, and Close
// ends the calls in flight with ErrClosed and leaves no goroutine (goleak checks the package).
func TestTLSDeadlineAndClose(t *testing.T) {
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "slow", tlsServerOpt{pair: p.server, block: true})
	c := tlsComm(t, tomlTLS(p.ca.File), nil)
	sp := sslProxy(t, c, servant, g.addr)
	ctx := testCtx(t)

	start := time.Now()
	_, err := sayHello(ctx, sp, "slow", 1, servantproxy.WithTimeout(150*time.Millisecond))
	if !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("blocked call: %v, want ErrTimeout", err)
	}
	checkTook(t, "timed-out call", time.Since(start), 150*time.Millisecond, 150*time.Millisecond+500*time.Millisecond)

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := sayHello(ctx, sp, "slow", uint64(10+i), servantproxy.WithTimeout(20*time.Second))
			errs <- err
		})
	}
	time.Sleep(100 * time.Millisecond) // the calls are written and wait
	closed := time.Now()
	_ = closeComm(t, c)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, communicator.ErrClosed) {
			t.Fatalf("call in flight at Close: %v, want ErrClosed", err)
		}
	}
	within(t, "Close", time.Since(closed), quick)
}

// TestTLSBackpressure: a TLS server that stops reading makes a client's unsent bytes reach
// send-buffer-limit, and further calls fail at once with ErrQueueFull instead of growing memory.
func TestTLSBackpressure(t *testing.T) {
	p := newTLSPKI(t)
	addr := startDeafTLS(t, p)
	c := tlsComm(t, tomlTLS(p.ca.File, "send-buffer-limit = 65536"), nil)
	sp := sslProxy(t, c, servant, addr)
	ctx := testCtx(t)
	body := strings.Repeat("x", 32<<10)
	var full error
	for i := range 2000 {
		err := onewayHello(ctx, sp, body, uint64(i))
		if errors.Is(err, communicator.ErrQueueFull) {
			full = err
			break
		}
		if err != nil {
			t.Fatalf("one-way call %d: %v", i, err)
		}
	}
	if full == nil {
		t.Fatal("64 MiB of one-way calls to a server that does not read: no ErrQueueFull")
	}
	if !strings.Contains(full.Error(), "send-buffer-limit") {
		t.Fatalf("queue-full error %q does not name send-buffer-limit", full)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := sayHello(cctx, sp, "x", 1); err == nil {
		t.Fatal("a call to a server that does not read succeeded")
	}
}
