package server

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
)

// TestUnixStartOverLiveSocket: listenStream removes "a socket file left at a unix path (by
// a process that did not close its listener)" before it listens. Before, it removed a live
// server's socket file too: a second server started on the path of one that is running started
// without error (a tcp server on a port in use fails with "address already in use"), took the
// path over, and when it stopped it removed the path, so the first server, still running, could
// no longer be reached by anyone.
func TestUnixStartOverLiveSocket(t *testing.T) {
	leakCheck(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	stop := func(s *Server) {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	a := New(WithLogger(zaptest.NewLogger(t).Named("a")))
	mustHandle(t, a, pbServant, "Echo", echo)
	if _, err := a.Start("unix://" + path); err != nil {
		t.Fatal(err)
	}
	defer stop(a)

	b := New(WithLogger(zaptest.NewLogger(t).Named("b")))
	mustHandle(t, b, pbServant, "Echo", echo)
	_, errB := b.Start("unix://" + path)
	if errB == nil {
		stop(b)
		t.Errorf("a second Start on the socket path of a running server: no error, want one (address in use)")
	}

	// Server a is still running: its clients must still reach it at its address.
	c, err := net.DialTimeout("unix", path, testTimeout)
	if err != nil {
		t.Fatalf("server a, still running, cannot be reached at its address %s: %v", path, err)
	}
	defer c.Close()
	checkEcho(&client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}, 1)
}
