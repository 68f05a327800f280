package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/codec"
)

// leakCheck checks, when the test ends and after everything it set up was stopped, that no
// goroutine is left.
func leakCheck(t *testing.T) {
	t.Cleanup(func() {
		goleak.VerifyNone(t,
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		)
	})
}

// eventually waits, within testTimeout, for cond to hold.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(largeTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, largeTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// drainUntilClosed reads and drops what c receives until the server's close shows: EOF or a
// reset.
func (c *client) drainUntilClosed() {
	c.t.Helper()
	if err := c.c.SetReadDeadline(time.Now().Add(testTimeout)); err != nil {
		c.t.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	for {
		_, err := c.c.Read(buf)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) || isReset(err):
			return
		default:
			c.t.Fatalf("read: %v, want the connection closed (EOF or reset)", err)
		}
	}
}

// replySize is the body of the replies the backlog tests ask for.
const replySize = 256 << 10

// bigReplies registers Big, which answers with replySize bytes, and Echo on s.
func bigReplies(t *testing.T) func(s *Server) {
	body := bigBody(replySize, 1)
	return func(s *Server) {
		mustHandle(t, s, pbServant, "Big", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
			return append(rsp, body...), nil
		})
		mustHandle(t, s, pbServant, "Echo", echo)
	}
}

// flood writes n requests for Big on c in one go, from id 1. Each has a minute to wait for a
// worker: with request's 3 s, on a busy machine the requests behind the first few dozen were
// answered as queue timeouts (a few bytes each) instead of run, and a backlog meant to grow to
// 50 MiB stayed under the cap a test waited for (TestMaxBacklog/workers, beside two CPU hogs).
func flood(c *client, n int) {
	var frames []byte
	for i := range n {
		req := request(int32(i+1), pbServant, "Big", nil)
		req.Timeout = int32(largeTimeout / time.Millisecond)
		frames = codec.AppendRequest(frames, req)
	}
	c.write(frames)
}

// checkEcho checks that c is served.
func checkEcho(c *client, id int32) {
	c.t.Helper()
	req := request(id, pbServant, "Echo", []byte("hi"))
	req.Timeout = int32(largeTimeout / time.Millisecond) // behind megabytes of replies on a busy machine, a wait for a worker is long
	c.write(codec.AppendRequest(nil, req))
	if rsp := c.recvWithin(largeTimeout); rsp.RequestID != id || rsp.Ret != codec.RetOK || string(rsp.Buffer) != "hi" {
		c.t.Fatalf("echo: ret %d body %q", rsp.Ret, rsp.Buffer)
	}
}

// TestMaxConns: beyond WithMaxConns a new connection is closed at accept while those open are
// served; once one closes, a new one is accepted.
func TestMaxConns(t *testing.T) {
	leakCheck(t)
	s, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) },
		WithMaxConns(2), WithNumEventLoop(2))
	a, b := dial(t, addr), dial(t, addr)
	checkEcho(a, 1)
	checkEcho(b, 1)

	third := dial(t, addr)
	third.expectClosed()
	if got := s.LimitStats().Refused; got != 1 {
		t.Fatalf("LimitStats().Refused = %d, want 1", got)
	}
	checkEcho(a, 2)
	checkEcho(b, 2)

	_ = a.c.Close()
	// The server sees a's close when its loop gets to it: until then a new connection may still
	// be refused.
	for i := int32(1); ; i++ {
		c := dial(t, addr)
		c.write(codec.AppendRequest(nil, request(i, pbServant, "Echo", []byte("hi"))))
		if _, err := c.readFrame(testTimeout); err == nil {
			break
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isReset(err) {
			t.Fatalf("a new connection after one closed: %v", err)
		}
		if i > 100 {
			t.Fatal("no new connection accepted after one closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	checkEcho(b, 3)
}

// TestIdleTimeout: a connection that sends nothing is closed; one that sends a request every
// 100 ms stays open over several timeouts.
func TestIdleTimeout(t *testing.T) {
	leakCheck(t)
	// The timeout is ten times the busy client's pace: only a stall of the test of most of a
	// second could make that client look idle.
	s, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) },
		WithIdleTimeout(time.Second))
	idle := dial(t, addr)
	busy := dial(t, addr)
	checkEcho(idle, 1)
	for i := range int32(25) { // 2.5 s: past the idle one's close, at most 1.25 s after its call
		checkEcho(busy, i+1)
		time.Sleep(100 * time.Millisecond)
	}
	idle.expectClosed()
	checkEcho(busy, 100)
	if got := s.LimitStats().Idle; got != 1 {
		t.Fatalf("LimitStats().Idle = %d, want 1 (the idle connection only)", got)
	}
}

// TestIdleTimeoutSparesWork: a connection whose handler blocks (worker mode) well past the idle
// timeout is not closed; it gets its reply, and is closed once idle afterwards. One whose large
// reply waits for a client that reads none of it is idle (no byte moves) and is closed.
func TestIdleTimeoutSparesWork(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	large := bigBody(8<<20, 3)
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Block", blk.handle)
		mustHandle(t, s, pbServant, "Large", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
			return append(rsp, large...), nil
		})
	}, WithWorkers(2), WithIdleTimeout(time.Second)) // a second between dial and write is never idle

	blocked := dial(t, addr)
	held := request(1, pbServant, "Block", []byte("late"))
	held.Timeout = int32(largeTimeout / time.Millisecond) // 3 s: its handler's ctx ended before the release under load
	blocked.write(codec.AppendRequest(nil, held))
	blk.waitStarted(t)
	unread := dial(t, addr)
	unread.write(codec.AppendRequest(nil, request(2, pbServant, "Large", nil)))

	blocked.expectSilence(2500 * time.Millisecond) // past two timeouts, and still open
	eventually(t, "the client reading none of its reply is closed as idle", func() bool {
		return s.LimitStats().Idle == 1
	})
	close(blk.release)
	if rsp := blocked.recv(); rsp.RequestID != 1 || string(rsp.Buffer) != "late" {
		t.Fatalf("the blocked call's reply: id %d body %q", rsp.RequestID, rsp.Buffer)
	}
	blocked.expectClosed()
	unread.drainUntilClosed()
	if got := s.LimitStats().Idle; got != 2 {
		t.Fatalf("LimitStats().Idle = %d, want 2", got)
	}
}

// TestBacklogRule: a client that asks for megabytes of replies and reads none is closed by
// WithBacklog's rule after three windows in which it took nothing, while another connection is
// served.
func TestBacklogRule(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			setup := bigReplies(t)
			s, addr := startServer(t, func(s *Server) {
				s.lim.window = 200 * time.Millisecond
				setup(s)
			}, slices.Concat(m.opts, []Option{WithBacklog(1<<20, 1024)})...)
			other := dial(t, addr)
			checkEcho(other, 1)
			stuck := dial(t, addr)
			flood(stuck, 100) // 25 MiB of replies: more than the sockets hold
			id := int32(2)
			eventually(t, "the client that does not read is closed", func() bool {
				checkEcho(other, id)
				id++
				return s.LimitStats().Slow == 1
			})
			stuck.drainUntilClosed()
			checkEcho(other, id)
			if st := s.LimitStats(); st.Backlog != 0 || st.Idle != 0 || st.Refused != 0 {
				t.Fatalf("LimitStats() = %+v: only the rule should have closed", st)
			}
			if w := s.lim.windows.Load(); w < slowWindows {
				t.Fatalf("%d windows measured before the close, want at least %d", w, slowWindows)
			}
		})
	}
}

// throttled reads at most 32 KiB at a time, pausing between reads: a slow but steady reader.
type throttled struct{ r io.Reader }

func (t throttled) Read(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return t.r.Read(p[:min(len(p), 32<<10)])
}

// TestBacklogRuleSparesSlowReader: a client that reads its backlog slowly but steadily (more
// than the minimum per window) is measured window after window, stays open and gets every
// reply. The windows are long enough (400 ms) that only a reader stalled for 1.2 s on end would
// be cut, which a busy machine does not do to a test; the backlog (22.5 MiB, read at most 32 KiB
// per 5 ms) stays over the limit for several windows.
func TestBacklogRuleSparesSlowReader(t *testing.T) {
	leakCheck(t)
	setup := bigReplies(t)
	s, addr := startServer(t, func(s *Server) {
		s.lim.window = 400 * time.Millisecond
		setup(s)
	}, WithBacklog(1<<20, 1024))
	c := dial(t, addr)
	const n = 90 // 22.5 MiB
	flood(c, n)
	if err := c.c.SetReadDeadline(time.Now().Add(6 * testTimeout)); err != nil {
		t.Fatal(err)
	}
	fr := codec.NewFrameReader(throttled{c.c}, 0)
	want := bigBody(replySize, 1)
	for i := range n {
		f, err := fr.Next()
		if err != nil {
			t.Fatalf("reply %d of %d: %v", i+1, n, err)
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil {
			t.Fatal(err)
		}
		if rsp.RequestID != int32(i+1) || !bytes.Equal(rsp.Buffer, want) {
			t.Fatalf("reply %d: id %d, %d bytes", i+1, rsp.RequestID, len(rsp.Buffer))
		}
	}
	if st := s.LimitStats(); st != (LimitStats{}) {
		t.Fatalf("LimitStats() = %+v, want nothing closed", st)
	}
	if w := s.lim.windows.Load(); w < slowWindows {
		t.Fatalf("%d windows measured over the limit, want at least %d: the rule was not exercised", w, slowWindows)
	}
	c.expectSilence(100 * time.Millisecond) // still open
}

// TestMaxBacklog: a client that pipelines requests for large replies and reads none is closed
// once its backlog passes WithMaxBacklog, long before the windowed rule could act; the server's
// other connections are served.
func TestMaxBacklog(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			setup := bigReplies(t)
			s, addr := startServer(t, func(s *Server) {
				s.lim.window = time.Hour
				setup(s)
			}, slices.Concat(m.opts, []Option{WithMaxBacklog(4 << 20), WithNumEventLoop(1)})...)
			other := dial(t, addr)
			checkEcho(other, 1)
			stuck := dial(t, addr)
			flood(stuck, 200) // 50 MiB of replies
			eventually(t, "the cap closes the connection", func() bool {
				st := s.LimitStats()
				if st.QueueTimeout > 0 {
					t.Fatalf("LimitStats() = %+v: requests of the flood were not run", st)
				}
				return st.Backlog == 1
			})
			stuck.drainUntilClosed()
			if st := s.LimitStats(); st != (LimitStats{Backlog: 1}) {
				t.Fatalf("LimitStats() = %+v, want the one closed by the cap", st)
			}
			checkEcho(other, 2)
		})
	}
}

// TestLimitsDefaults: the API's defaults; the backlog rule is TarsCpp's, on.
func TestLimitsDefaults(t *testing.T) {
	o := New().opts
	if o.maxConns != 0 || o.idle != 0 || o.backlogLimit != DefaultBacklogLimit ||
		o.backlogMin != DefaultBacklogMin || o.maxBacklog != DefaultMaxBacklog || o.frameBudget != DefaultFrameBudget {
		t.Fatalf("defaults: maxConns %d idle %v backlog %d/%d maxBacklog %d frameBudget %d", o.maxConns, o.idle,
			o.backlogLimit, o.backlogMin, o.maxBacklog, o.frameBudget)
	}
	if s := New(WithFrameBudget(-1)); s.budget != nil || New().budget.Limit() != DefaultFrameBudget {
		t.Fatal("WithFrameBudget(-1) must remove the budget; the default must be DefaultFrameBudget")
	}
	if DefaultBacklogLimit != 100<<20 || DefaultBacklogMin != 1024 {
		t.Fatal("WithBacklog's defaults must be TarsCpp's: 100 MiB and 1024 bytes")
	}
}
