package server

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestInlineDeadlineCountsFromRead: a request that carries its client's timeout is handled with
// a ctx whose deadline is that long after the loop read it (Current.received). Two requests
// arrive in one read on an inline server: the first without a timeout, whose handler takes
// 600 ms, then one with 200 ms: by the time its handler runs, its ctx is past its deadline.
//
// Before, the loop took the read's stamp lazily, by the first request with a timeout: here after
// the first handler returned, so the second request's deadline counted from 600 ms after its
// read, and its handler worked on for a client that was gone.
func TestInlineDeadlineCountsFromRead(t *testing.T) {
	leakCheck(t)
	const (
		slow    = 600 * time.Millisecond
		timeout = 200 // ms
	)
	type seen struct {
		deadline time.Time
		has      bool
		err      error
		at       time.Time
	}
	got := make(chan seen, 1)
	setup := func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Slow", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			time.Sleep(slow)
			return append(rsp, req...), nil
		})
		mustHandle(t, s, "App.S.Obj", "Look", func(ctx context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			d, ok := ctx.Deadline()
			got <- seen{deadline: d, has: ok, err: ctx.Err(), at: time.Now()}
			return append(rsp, req...), nil
		})
	}
	_, addr := startServer(t, setup, WithNumEventLoop(1)) // inline: WithWorkers(0), the default
	c := dial(t, addr)

	first := request(1, "App.S.Obj", "Slow", []byte("a"))
	first.Timeout = 0 // no timeout
	second := request(2, "App.S.Obj", "Look", []byte("b"))
	second.Timeout = timeout
	frames := codec.AppendRequest(nil, first)
	frames = codec.AppendRequest(frames, second)
	sent := time.Now()
	c.write(frames) // one write: on loopback, one read
	for range 2 {
		if rsp := c.recv(); rsp.Ret != codec.RetOK {
			t.Fatalf("reply %d: ret %d %q", rsp.RequestID, rsp.Ret, rsp.ResultDesc)
		}
	}
	var s seen
	select {
	case s = <-got:
	case <-time.After(testTimeout):
		t.Fatal("Look did not run")
	}
	if !s.has {
		t.Fatal("a request with a 200 ms timeout: the handler's ctx has no deadline")
	}
	latest := sent.Add(timeout * time.Millisecond) // read after the write: no earlier; 50 ms slack below
	t.Logf("Look ran %v after the write; its ctx deadline is %v after the write, ctx.Err() = %v",
		s.at.Sub(sent).Round(time.Millisecond), s.deadline.Sub(sent).Round(time.Millisecond), s.err)
	if s.deadline.After(latest.Add(100 * time.Millisecond)) {
		t.Errorf("the request read together with a slow one got a ctx deadline %v after it was sent (want about %d ms: "+
			"its iTimeout from the read); its handler ran %v after the write with ctx.Err() = %v, working for a client "+
			"that gave up %v before",
			s.deadline.Sub(sent).Round(time.Millisecond), timeout, s.at.Sub(sent).Round(time.Millisecond), s.err,
			s.at.Sub(latest).Round(time.Millisecond))
	}
}
