package communicator_test

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// startCrashTLS is a TLS server (no client certificate asked) that completes the handshake,
// reads the client's request and then goes away without a reply and without close_notify, as a
// crashed process (or a killed container) does: the kernel closes its socket.
func startCrashTLS(t *testing.T, p *tlsPKI) string {
	t.Helper()
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: p.server.Cert, Key: p.server.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				tc := c.(*tls.Conn)
				_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
				if tc.HandshakeContext(context.Background()) == nil {
					_, _ = tc.Read(make([]byte, 1)) // the request arrived
					time.Sleep(100 * time.Millisecond)
				}
				_ = tc.NetConn().Close() // the process died: no close_notify, no reply
			})
		}
	})
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// TestTLSServerCrashIsNotTLSFailure: a TLS server (no client certificates asked, no -e 1)
// that crashes while the first call of a fresh connection runs closes the connection without a
// reply. That is a lost connection, as over tcp: the call must fail with ErrConnection, and not
// with tlsconn.ErrTLS and a hint that the server "perhaps refused this side's client
// certificate" (the client offered none and the server asked for none), which sent the
// operator to check certificates instead of the crashed server before. The silent-close rule
// now applies only when the server asked for a certificate (tlsconn.ClientSession).
func TestTLSServerCrashIsNotTLSFailure(t *testing.T) {
	p := newTLSPKI(t)
	addr := startCrashTLS(t, p)
	c := tlsComm(t, tomlTLS(p.ca.File), nil)
	sp := sslProxy(t, c, servant, addr)
	ctx := testCtx(t)

	start := time.Now()
	_, err := sayHello(ctx, sp, "x", 1, servantproxy.WithTimeout(10*time.Second))
	within(t, "the call whose server crashed", time.Since(start), quick)
	t.Logf("call: %v", err)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("call whose server crashed: %v, want ErrConnection", err)
	}
	if errors.Is(err, tlsconn.ErrTLS) {
		t.Fatalf("call whose server crashed: %q matches tlsconn.ErrTLS: a lost connection is reported as a TLS failure (a refused client certificate)", err)
	}
}
