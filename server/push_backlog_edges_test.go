package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// pushBacklogServer starts a server whose "subscribe" hands the connection's Pusher to the test,
// "big" answers with n bytes of bigBody (n is the request body's length as a decimal), and "echo"
// echoes. tls starts it with TLS (as tls_test.go does).
func pushBacklogServer(t *testing.T, tls bool, opts ...Option) (*Server, string, chan *Pusher, *tlsSetup) {
	t.Helper()
	subscribed := make(chan *Pusher, 16)
	var ts *tlsSetup
	if tls {
		ts = newTLSSetup(t)
		cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: ts.ca.File, Cert: ts.server.Cert, Key: ts.server.Key}, false)
		if err != nil {
			t.Fatal(err)
		}
		opts = append([]Option{WithTLS(cfg)}, opts...)
	}
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, tarsServant, "subscribe", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			subscribed <- cur.Pusher()
			return append(rsp, "ok"...), nil
		})
		mustHandle(t, s, tarsServant, "big", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			var n int
			_, _ = fmt.Sscan(string(req), &n)
			return append(rsp, bigBody(n, 9)...), nil
		})
		mustHandle(t, s, tarsServant, "echo", echo)
	}, opts...)
	return s, addr, subscribed, ts
}

func pushBacklogDial(t *testing.T, addr string, ts *tlsSetup) *client {
	t.Helper()
	var c *client
	if ts != nil {
		c = dialTLS(t, addr, clientConfig(t, ts, nil))
	} else {
		c = dial(t, addr)
	}
	c.fr = codec.NewFrameReader(c.c, 64<<20)
	return c
}

// TestPushRecoversAfterClientReads: pushes refused for the backlog (ErrPushBacklog) are
// taken again once the client has read everything, on TCP and TLS, with workers and inline, and
// with a large reply finished by a writer goroutine (bigwrite) ahead of them; every accepted push
// arrives intact, and a call made while pushes are refused is answered.
func TestPushRecoversAfterClientReads(t *testing.T) {
	const maxBacklog = 1 << 20
	for _, m := range []struct {
		name string
		tls  bool
		big  bool
		opts []Option
	}{
		{name: "tcp-workers", opts: []Option{WithWorkers(2)}},
		{name: "tcp-inline", opts: []Option{WithWorkers(0)}},
		{name: "tls-workers", tls: true, opts: []Option{WithWorkers(2)}},
		{name: "tls-inline", tls: true, opts: []Option{WithWorkers(0)}},
		{name: "tcp-bigwrite", big: true, opts: []Option{WithWorkers(2)}},
	} {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			maxb := maxBacklog
			if m.big {
				maxb = 64 << 20 // the large reply must not close the connection
			}
			opts := append([]Option{WithMaxBacklog(maxb), WithNumEventLoop(1), WithMaxPacketSize(32 << 20)}, m.opts...)
			s, addr, subscribed, ts := pushBacklogServer(t, m.tls, opts...)
			c := pushBacklogDial(t, addr, ts)
			if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
				t.Fatalf("subscribe: ret %d", rsp.Ret)
			}
			p := <-subscribed
			if m.big {
				// A reply of 24 MiB the client does not read: a writer goroutine finishes it.
				c.write(codec.AppendRequest(nil, request(2, tarsServant, "big", []byte("25165824"))))
				eventually(t, "a writer goroutine writing the large reply", func() bool { return s.bigStarted.Load() > 0 })
			}
			accepted := 0
			var err error
			for i := range 100_000 {
				body := bigBody(32<<10, byte(i))
				if err = p.Push("Feed", body); err != nil {
					break
				}
				accepted++
				time.Sleep(200 * time.Microsecond)
			}
			if !errors.Is(err, ErrPushBacklog) {
				t.Fatalf("after %d pushes: %v, want ErrPushBacklog", accepted, err)
			}
			seenAtRefusal := p.cs.seen.Load()
			// A call while pushes are refused, then the client reads everything.
			c.write(codec.AppendRequest(nil, request(3, tarsServant, "echo", []byte("ping"))))
			gotPush, gotPing := 0, false
			for !gotPing {
				f, err := c.readFrame(largeTimeout)
				if err != nil {
					t.Fatalf("after %d pushes read (of %d accepted; seen %d at the refusal): %v; closed %v, limits %+v",
						gotPush, accepted, seenAtRefusal, err, p.Closed(), s.LimitStats())
				}
				var rsp codec.ResponsePacket
				if err := codec.DecodeResponse(f, &rsp); err != nil {
					t.Fatal(err)
				}
				switch rsp.RequestID {
				case codec.PushRequestID:
					if !bytes.Equal(rsp.Buffer, bigBody(32<<10, byte(gotPush))) {
						t.Fatalf("push %d: body differs", gotPush)
					}
					gotPush++
				case 3:
					gotPing = true
				case 2:
				default:
					t.Fatalf("unexpected reply id %d", rsp.RequestID)
				}
			}
			if gotPush != accepted {
				t.Fatalf("read %d pushes before the reply to the call, %d accepted", gotPush, accepted)
			}
			// Everything read: a push is taken again (after at most one more refusal, which asks
			// the loop to count again).
			deadline := time.Now().Add(largeTimeout)
			var last error
			for time.Now().Before(deadline) {
				if last = p.Push("Feed", []byte("again")); last == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if last != nil {
				t.Fatalf("the client read everything, yet a push is still refused after %v (seen %d): %v", largeTimeout, p.cs.seen.Load(), last)
			}
			if rsp := c.recvWithin(largeTimeout); rsp.RequestID != codec.PushRequestID || string(rsp.Buffer) != "again" {
				t.Fatalf("the push after the recovery: id %d %q", rsp.RequestID, rsp.Buffer)
			}
		})
	}
}

// TestPushLargerThanCapTakenWhenIdle: with WithMaxBacklog below a push's size, the push is
// taken on an idle connection whose client reads everything (nothing unsent), as a reply of the
// same size is, without closing the connection. Before, it was refused with ErrPushBacklog ("push
// more slowly") forever.
func TestPushLargerThanCapTakenWhenIdle(t *testing.T) {
	leakCheck(t)
	const maxBacklog = 64 << 10
	s, addr, subscribed, _ := pushBacklogServer(t, false, WithMaxBacklog(maxBacklog), WithNumEventLoop(1), WithWorkers(2))
	c := pushBacklogDial(t, addr, nil)
	if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
		t.Fatalf("subscribe: ret %d", rsp.Ret)
	}
	p := <-subscribed
	// A reply of 100 KiB: delivered, the connection stays.
	if rsp := c.call(request(2, tarsServant, "big", []byte("102400"))); rsp.Ret != 0 || len(rsp.Buffer) != 100<<10 {
		t.Fatalf("reply of 100 KiB: ret %d, %d bytes", rsp.Ret, len(rsp.Buffer))
	}
	body := make([]byte, 100<<10)
	var err error
	for start := time.Now(); time.Since(start) < largeTimeout; time.Sleep(10 * time.Millisecond) {
		if err = p.Push("Feed", body); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("a push of 100 KiB to an idle client that reads everything, max backlog 64 KiB, "+
			"refused for %v (capped %d, closed %v): %v", largeTimeout, s.lim.capped.Load(), p.Closed(), err)
	}
}

// pushFill pushes 32 KiB bodies, paced, to a client that reads nothing until one is refused,
// and waits for the recount that refusal asked for. It returns the pushes accepted.
func pushFill(t *testing.T, p *Pusher) int {
	t.Helper()
	body := make([]byte, 32<<10)
	for i := 0; ; i++ {
		err := p.Push("Feed", body)
		if errors.Is(err, ErrPushBacklog) {
			eventually(t, "the recount", func() bool {
				p.cs.mu.Lock()
				defer p.cs.mu.Unlock()
				return !p.cs.queued && p.cs.out.size() == 0
			})
			time.Sleep(20 * time.Millisecond)
			return i
		}
		if err != nil || i > 100_000 {
			t.Fatalf("push %d (paced, to a client that reads nothing): %v; limits %+v", i, err, p.cs.loop.s.LimitStats())
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// TestReplyWhilePushesRefusedKeepsConn: pushes are taken until the connection's unsent bytes
// reach half of WithMaxBacklog; a reply then (the client calls while its feed is refused) fits
// in the other half, and the connection stays. Before, pushes were taken to within a frame of
// the cap, the reply took the unsent bytes over it, and the loop closed the connection.
func TestReplyWhilePushesRefusedKeepsConn(t *testing.T) {
	leakCheck(t)
	const maxBacklog = 1 << 20
	s, addr, subscribed, _ := pushBacklogServer(t, false, WithMaxBacklog(maxBacklog), WithNumEventLoop(1),
		WithWorkers(2), WithBacklog(0, 0))
	c := pushBacklogDial(t, addr, nil)
	if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
		t.Fatalf("subscribe: ret %d", rsp.Ret)
	}
	p := <-subscribed
	n := pushFill(t, p)
	seen := p.cs.seen.Load()
	c.write(codec.AppendRequest(nil, request(2, tarsServant, "big", []byte("40960"))))
	time.Sleep(300 * time.Millisecond) // time for the reply to be made and written: a close would show
	if p.Closed() || s.lim.capped.Load() != 0 {
		t.Errorf("after %d pushes (seen %d, cap %d), a reply of 40 KiB closed the connection for its backlog "+
			"(closed %v, capped %d)", n, seen, maxBacklog, p.Closed(), s.lim.capped.Load())
	}
}

// TestBusyPusherRefusedNotClosed: a pusher that retries at once when refused, to a client
// that reads nothing, on plain TCP. Push counts cs.out and seen, but a flush takes cs.out (under
// cs.mu) before it writes and publishes seen only after the write: a Push in between counts the
// bytes being written nowhere, is accepted, and the next flush takes the connection's unsent
// bytes over WithMaxBacklog, which closed it (failed in 4 of 6 runs before). The flush now adds
// what it takes to seen as it takes it.
func TestBusyPusherRefusedNotClosed(t *testing.T) {
	for _, m := range []struct {
		name string
		opts []Option
	}{
		{name: "workers", opts: []Option{WithWorkers(2)}},
		{name: "inline", opts: []Option{WithWorkers(0)}},
	} {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			const maxBacklog = 1 << 20
			s, addr, subscribed, _ := pushBacklogServer(t, false, append([]Option{WithMaxBacklog(maxBacklog),
				WithNumEventLoop(1), WithBacklog(0, 0)}, m.opts...)...)
			c := pushBacklogDial(t, addr, nil)
			if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
				t.Fatalf("subscribe: ret %d", rsp.Ret)
			}
			p := <-subscribed
			body := make([]byte, 32<<10)
			accepted, refused := 0, 0
			var err error
			for start := time.Now(); time.Since(start) < 2*time.Second; {
				if err = p.Push("Feed", body); err == nil {
					accepted++
				} else if errors.Is(err, ErrPushBacklog) {
					refused++
				} else {
					break
				}
			}
			t.Logf("%d pushes taken, %d refused; seen %d; limits %+v", accepted, refused, p.cs.seen.Load(), s.LimitStats())
			if err != nil && !errors.Is(err, ErrPushBacklog) || s.lim.capped.Load() != 0 {
				t.Errorf("a pusher to a client that reads nothing: the connection was closed for its backlog "+
					"(capped %d) after %d pushes taken and %d refused: %v", s.lim.capped.Load(), accepted, refused, err)
			}
		})
	}
}
