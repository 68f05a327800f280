package server

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/tlsconn"
)

// TestHandlerGoexitInlineTLS is TestHandlerGoexitInline over TLS, with one event loop so that
// both connections are on the lost loop: both are shut down at once. The shutdown used to go to
// each connection's Fd(), which is -1 for a TLS one (no direct socket I/O past the encryption):
// every TLS connection of the lost loop was left open, its client waiting for replies that never
// come. It now goes to the socket under the records (tlsconn.LoopConn.SockFd).
func TestHandlerGoexitInlineTLS(t *testing.T) {
	ts := newTLSSetup(t)
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: ts.server.Cert, Key: ts.server.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	addr := goexitServer(t, WithTLS(cfg), WithNumEventLoop(1))
	a, b := dialTLS(t, addr, clientConfig(t, ts, nil)), dialTLS(t, addr, clientConfig(t, ts, nil))
	exitOn(t, a, b)
	// Both connections were on the one lost loop: both must be shut down promptly.
	for _, c := range []struct {
		name string
		cl   *client
	}{{"a (the Goexit call's)", a}, {"b (the other connection)", b}} {
		start := time.Now()
		f, err := c.cl.readFrame(3 * time.Second)
		switch {
		case err == nil:
			t.Fatalf("%s: got frame %x, want the connection shut down", c.name, f)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err):
		default:
			t.Errorf("%s on the lost loop: %v after %v, want it shut down (EOF or reset) at once", c.name, err, time.Since(start).Round(time.Millisecond))
		}
	}
}
