package server

import (
	"context"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// fdCount is the number of open file descriptors of this process.
func fdCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestAcceptBusyLoopKeepsMaxConns: WithMaxConns(4) says a connection beyond the 4th is closed at
// accept, and so it is while the server's only loop runs a long inline handler: a client that
// opens 200 more connections finds them closed, and the server holds no goroutine or descriptor
// for them. Before, the accept loop started a goroutine per connection that waited, in gnet's
// EnrollContext, for the busy loop to register it (holding the socket and its dup), and maxconns
// was counted only later, in OnOpen, on that loop: the server held all 200.
func TestAcceptBusyLoopKeepsMaxConns(t *testing.T) {
	const maxConns, extra = 4, 200
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Block", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
			entered <- struct{}{}
			<-release
			return rsp, nil
		})
	}, WithNumEventLoop(1), WithMaxConns(maxConns))
	released := false
	free := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(free) // before the server's Stop

	busy := dial(t, addr)
	busy.write(codec.AppendRequest(nil, request(1, pbServant, "Block", nil)))
	select {
	case <-entered:
	case <-time.After(testTimeout):
		t.Fatal("the blocking handler did not start")
	}

	g0, fd0 := runtime.NumGoroutine(), fdCount(t)
	conns := make([]net.Conn, 0, extra)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for range extra {
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
	}
	// Let the accept loop take what the kernel queued (bounded wait).
	var g, fd int
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		g, fd = runtime.NumGoroutine()-g0, fdCount(t)-fd0-extra // the server's share of the descriptors
		if g >= extra/2 {
			break
		}
	}
	// The connections beyond maxconns are still open: none was closed at accept.
	closedByServer := 0
	for _, c := range conns[:10] {
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				closedByServer++
			}
		}
	}
	free()
	if g > maxConns+10 || fd > 2*(maxConns+10) {
		t.Fatalf("with maxconns %d and its loop busy, the server took %d connections and holds %d more goroutines and %d more descriptors "+
			"(%d of 10 sampled connections closed by it); want the connections beyond maxconns closed at accept, "+
			"and the goroutines and descriptors held bounded by maxconns, not by what clients open",
			maxConns, extra, g, fd, closedByServer)
	}
}
