package server

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// pacedConn takes at most 256 bytes from the socket every 20 ms once paced: about 5 KiB per
// 400 ms window, five times WithBacklog's minimum of 1024 bytes. A slow but steady reader.
type pacedConn struct {
	net.Conn
	paced atomic.Bool
}

func (c *pacedConn) Read(p []byte) (int, error) {
	if c.paced.Load() {
		time.Sleep(20 * time.Millisecond)
		p = p[:min(len(p), 256)]
	}
	return c.Conn.Read(p)
}

// smallWindowDial connects with a small receive buffer and segment size, so that what the client
// reads frees room in the server's socket as it reads, not in loopback's 64 KiB window updates.
func smallWindowDial(addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: testTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10); serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.Dial("tcp", addr)
}

// TestBacklogRuleSparesSteadyReader: WithBacklog's rule (doc.go # Limits, TarsCpp's
// backpacketlimit/backpacketmin) closes a connection "that sends at most the minimum in each of 3
// windows in a row". A client that asked for 16 MiB of 256 KiB replies, one request per read (so
// each reply goes into gnet's outbound buffer, not to a large-reply writer), and then reads about
// 5 KiB per 400 ms window (five times the 1024-byte minimum), steadily, must stay open. Before,
// it was closed by the rule after its first 3 windows: the rule counted as sent only what left gnet's buffer, and gnet moves
// bytes from its buffer to the socket only when the kernel reports the socket writable (its send
// queue drained to about half), so a reader that takes less than half the socket's send buffer in
// 3 windows is seen to take nothing. The same client served through the large-reply writer (all
// requests in one read) was spared: that writer writes as the socket takes bytes. The rule now
// counts what left the socket's send queue too (internal/sockq).
func TestBacklogRuleSparesSteadyReader(t *testing.T) {
	leakCheck(t)
	setup := bigReplies(t)
	s, addr := startServer(t, func(s *Server) {
		s.lim.window = 400 * time.Millisecond
		setup(s)
	}, WithBacklog(1<<20, 1024), WithNumEventLoop(1))
	raw, err := smallWindowDial(addr)
	if err != nil {
		t.Fatal(err)
	}
	pc := &pacedConn{Conn: raw}
	for i := range 64 { // 16 MiB of replies: the backlog stands above the 1 MiB limit
		if _, err := raw.Write(codec.AppendRequest(nil, request(int32(i+1), pbServant, "Big", nil))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // one request per read
	}
	pc.paced.Store(true)
	var wg sync.WaitGroup
	var read atomic.Int64
	wg.Go(func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := pc.Read(buf)
			read.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	t.Cleanup(func() {
		_ = raw.SetDeadline(time.Now()) // ends the reader
		wg.Wait()
		_ = raw.Close()
	})

	// Until the rule has measured 5 windows over the limit (which it would close the connection
	// after 3 of): however slowly the server builds its replies (race builds of large buffers
	// are slow on some machines), the rule is exercised; a minute is a liveness bound.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && s.LimitStats().Slow == 0 && s.lim.windows.Load() < slowWindows+2 {
		time.Sleep(20 * time.Millisecond)
	}
	if st := s.LimitStats(); st.Slow != 0 {
		t.Fatalf("LimitStats().Slow = %d: the connection was closed as one that does not read its replies, after the "+
			"client had read %d bytes over %d windows measured (~5 KiB per 400 ms window, backpacketmin 1024); want it open",
			st.Slow, read.Load(), s.lim.windows.Load())
	}
	if w := s.lim.windows.Load(); w < slowWindows {
		t.Fatalf("%d windows measured over the limit, want at least %d: the rule was not exercised", w, slowWindows)
	}
}
