package server

import (
	"errors"
	"fmt"
	"testing"
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
	s, addr, subscribed, _ := pushBacklogServer(t, false, WithMaxBacklog(maxBacklog), WithNumEventLoop(1))
	c := pushBacklogDial(t, addr, nil)
	if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
		t.Fatalf("subscribe: ret %d", rsp.Ret)
	}
	p := <-subscribed
	accepted := pushFill(t, p) // paced, as a feed is: refused (ErrPushBacklog) at the end
	t.Logf("%d pushes of %d KiB accepted before ErrPushBacklog", accepted, size>>10)
	if p.Closed() || s.lim.capped.Load() != 0 {
		t.Fatalf("the connection closed (%v) or was capped (%d times) while pushes were refused", p.Closed(), s.lim.capped.Load())
	}
	// The client reads now: pushes are taken again once the loop sees the room it made.
	body := make([]byte, size)
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
