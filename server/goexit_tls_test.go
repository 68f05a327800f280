package server

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
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
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "S", "Exit", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			runtime.Goexit()
			return nil, nil
		})
		mustHandle(t, s, "S", "Echo", echo)
	}, WithTLS(cfg), WithNumEventLoop(1))
	a, b := dialTLS(t, addr, clientConfig(t, ts, nil)), dialTLS(t, addr, clientConfig(t, ts, nil))
	if rsp := a.call(request(1, "S", "Echo", []byte("a"))); rsp.Ret != codec.RetOK {
		t.Fatalf("echo on a: ret = %d", rsp.Ret)
	}
	if rsp := b.call(request(1, "S", "Echo", []byte("b"))); rsp.Ret != codec.RetOK {
		t.Fatalf("echo on b: ret = %d", rsp.Ret)
	}
	rsp := a.call(request(2, "S", "Exit", []byte("x")))
	if rsp.Ret != codec.RetUnknown || rsp.ResultDesc != goexitDesc {
		t.Fatalf("Goexit call: ret = %d (%q), want RetUnknown (%q)", rsp.Ret, rsp.ResultDesc, goexitDesc)
	}
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
