package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestPushRefusedBeforeBacklogCloses: a feed pushed faster than its client reads must be refused
// with ErrPushBacklog, so that the application can pace it, and not close the connection.
// Before, Push counted only the bytes queued for the loop; those the loop had handed to the
// socket and the socket had not taken counted toward WithMaxBacklog only, which closed the
// connection: the pusher learnt of its client's pace by ErrConnClosed. Once the client reads,
// pushes are taken again, and every accepted one arrives.
func TestPushRefusedBeforeBacklogCloses(t *testing.T) {
	leakCheck(t)
	const size = 32 << 10
	const maxBacklog = 1 << 20
	subscribed := make(chan *Pusher, 1)
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, tarsServant, "subscribe", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			subscribed <- cur.Pusher()
			return append(rsp, "ok"...), nil
		})
	}, WithMaxBacklog(maxBacklog), WithNumEventLoop(1))
	c := dial(t, addr)
	c.fr = codec.NewFrameReader(c.c, 4<<20)
	if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
		t.Fatalf("subscribe: ret %d", rsp.Ret)
	}
	p := <-subscribed
	body := make([]byte, size)
	accepted := 0
	var err error
	for range 20_000 { // 640 MiB: the socket's buffers and the cap are far below
		if err = p.Push("Feed", body); err != nil {
			break
		}
		accepted++
		// Paced as a feed is, so that the loop hands each push on before the next: a pusher
		// faster than the loop is refused on the bytes queued for it alone (TestPushLimits).
		time.Sleep(200 * time.Microsecond)
	}
	if !errors.Is(err, ErrPushBacklog) {
		t.Fatalf("after %d pushes of %d KiB to a client that reads none (max backlog %d KiB): %v; want ErrPushBacklog",
			accepted, size>>10, maxBacklog>>10, err)
	}
	t.Logf("%d pushes of %d KiB accepted before ErrPushBacklog", accepted, size>>10)
	if p.Closed() || s.lim.capped.Load() != 0 {
		t.Fatalf("the connection closed (%v) or was capped (%d times) while pushes were refused", p.Closed(), s.lim.capped.Load())
	}
	// The client reads now: pushes are taken again once the loop sees the room it made.
	read := make(chan error, 1)
	want := accepted + 1
	go func() {
		for i := range want {
			if f, err := c.readFrame(largeTimeout); err != nil || len(f) < size {
				read <- fmt.Errorf("frame %d of %d: %d bytes, %w", i, want, len(f), err)
				return
			}
		}
		read <- nil
	}()
	eventually(t, "a push accepted once the client reads", func() bool {
		err := p.Push("Feed", body)
		if err != nil && !errors.Is(err, ErrPushBacklog) {
			t.Fatalf("push while the client reads: %v", err)
		}
		return err == nil
	})
	if err := <-read; err != nil {
		t.Fatalf("reading the %d accepted pushes: %v", want, err)
	}
	if p.Closed() || s.lim.capped.Load() != 0 {
		t.Fatalf("the connection closed (%v) or was capped (%d times)", p.Closed(), s.lim.capped.Load())
	}
}
