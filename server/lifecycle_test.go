package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// blocker is a handler that signals when it starts and blocks until released (or its ctx ends).
type blocker struct {
	started chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blocker) handle(ctx context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
	b.started <- struct{}{}
	select {
	case <-b.release: // released: answer, even if the client's deadline has passed meanwhile
		return append(rsp, req...), nil
	default:
	}
	select {
	case <-b.release:
		return append(rsp, req...), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *blocker) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(testTimeout):
		t.Fatal("handler did not start")
	}
}

func TestWorkersDoNotBlockLoop(t *testing.T) {
	b := newBlocker()
	defer close(b.release)
	// One loop: a blocked inline handler would stall every connection.
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Block", b.handle)
		mustHandle(t, s, pbServant, "Sleep", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
			time.Sleep(200 * time.Millisecond)
			return rsp, nil
		})
		mustHandle(t, s, pbServant, "Echo", echo)
	}, WithWorkers(4), WithNumEventLoop(1))

	slow := dial(t, addr)
	slow.write(codec.AppendRequest(nil, request(1, pbServant, "Block", nil)))
	slow.write(codec.AppendRequest(nil, request(2, pbServant, "Sleep", nil)))
	b.waitStarted(t)

	// Were the loop blocked, this call would never be answered.
	fast := dial(t, addr)
	if rsp := fast.call(request(3, pbServant, "Echo", []byte("quick"))); string(rsp.Buffer) != "quick" {
		t.Fatalf("echo: body %q", rsp.Buffer)
	}
	// The same connection is not blocked either: its sleeping request finishes first.
	if rsp := slow.recv(); rsp.RequestID != 2 {
		t.Errorf("got reply id %d, want 2 (Sleep) before the blocked call", rsp.RequestID)
	}
}

func TestQueueFull(t *testing.T) {
	b := newBlocker()
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Block", b.handle)
	}, WithWorkers(1), WithQueueCap(1))
	c := dial(t, addr)
	c.write(codec.AppendRequest(nil, request(1, pbServant, "Block", []byte("1"))))
	b.waitStarted(t) // the only worker is busy
	var buf []byte
	buf = codec.AppendRequest(buf, request(2, pbServant, "Block", []byte("2"))) // queued
	buf = codec.AppendRequest(buf, request(3, pbServant, "Block", []byte("3"))) // refused
	c.write(buf)
	if rsp := c.recv(); rsp.RequestID != 3 || rsp.Ret != codec.RetOverload {
		t.Fatalf("got id %d ret %d, want id 3 refused with %d", rsp.RequestID, rsp.Ret, codec.RetOverload)
	}
	close(b.release)
	for _, id := range []int32{1, 2} {
		if rsp := c.recv(); rsp.RequestID != id || rsp.Ret != codec.RetOK {
			t.Fatalf("got id %d ret %d, want id %d ok", rsp.RequestID, rsp.Ret, id)
		}
	}
}

// TestStopWaitsForInflight stops a server while a handler runs: Stop waits for it, its reply
// is delivered, requests that arrive meanwhile are refused, then the connection closes.
func TestStopWaitsForInflight(t *testing.T) {
	b := newBlocker()
	s := New(WithWorkers(2))
	mustHandle(t, s, pbServant, "Block", b.handle)
	stopOnCleanup(t, s)
	mustHandle(t, s, pbServant, "Echo", echo)
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr.String())
	c.write(codec.AppendRequest(nil, request(1, pbServant, "Block", []byte("inflight"))))
	b.waitStarted(t)

	// Two concurrent Stops: both wait, both succeed.
	stopped := make(chan error, 2)
	for range 2 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			stopped <- s.Stop(ctx)
		}()
	}
	for !s.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	// A request arriving while Stop drains is refused.
	if rsp := c.call(request(2, pbServant, "Echo", []byte("late"))); rsp.Ret != codec.RetOverload {
		t.Errorf("request during Stop: ret %d desc %q, want %d", rsp.Ret, rsp.ResultDesc, codec.RetOverload)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned %v with a handler in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(b.release)
	if rsp := c.recv(); rsp.RequestID != 1 || string(rsp.Buffer) != "inflight" {
		t.Errorf("in-flight reply: id %d body %q", rsp.RequestID, rsp.Buffer)
	}
	for range 2 {
		if err := <-stopped; err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	c.expectClosed()
	if _, err := s.Start("127.0.0.1:0"); !errors.Is(err, ErrStopped) {
		t.Errorf("Start after Stop: %v, want ErrStopped", err)
	}
}

// TestStopTimeout stops a server whose handler outlives Stop's ctx: Stop cancels the handlers'
// ctx and returns ctx's error; a second Stop waits for the rest.
func TestStopTimeout(t *testing.T) {
	b := newBlocker()
	s := New(WithWorkers(1))
	mustHandle(t, s, pbServant, "Block", b.handle)
	stopOnCleanup(t, s)
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr.String())
	var buf []byte
	buf = codec.AppendRequest(buf, request(1, pbServant, "Block", nil))
	buf = codec.AppendRequest(buf, request(2, pbServant, "Block", nil)) // queued, then dropped
	c.write(buf)
	b.waitStarted(t)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop: %v, want %v", err, context.DeadlineExceeded)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), testTimeout)
	defer cancel2()
	if err := s.Stop(ctx2); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if len(b.started) != 0 {
		t.Errorf("the queued request ran after Stop gave up")
	}
}

// TestStopWithEndedCtx: a Stop whose ctx has already ended still shuts a started server down
// (it used to return ctx.Err() before starting half of the time): its connections close, and a
// second Stop waits for the rest. Eight servers, as the old failure
// was a coin toss.
func TestStopWithEndedCtx(t *testing.T) {
	for range 8 {
		s, c := startEchoCalled(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Stop with an ended ctx: %v, want %v (or nil, had it finished)", err, context.Canceled)
		}
		c.expectClosed()
		ctx2, cancel2 := context.WithTimeout(context.Background(), testTimeout)
		if err := s.Stop(ctx2); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		cancel2()
	}
}

// startEchoCalled starts an inline echo server (stopped by the test's cleanup), and returns it
// with a client connection that one call went through.
func startEchoCalled(t *testing.T) (*Server, *client) {
	t.Helper()
	s := New()
	stopOnCleanup(t, s)
	mustHandle(t, s, pbServant, "Echo", echo)
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr.String())
	if rsp := c.call(request(1, pbServant, "Echo", []byte("x"))); string(rsp.Buffer) != "x" {
		t.Fatalf("echo: %q", rsp.Buffer)
	}
	return s, c
}

func TestStopInline(t *testing.T) {
	s, c := startEchoCalled(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	start := time.Now()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 450*time.Millisecond {
		t.Errorf("Stop took %v", d) // gnet's Engine.Stop alone polls every 500 ms
	}
	c.expectClosed()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestAPIErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := New()
	h := HandlerFunc(echo)
	if err := s.Handle("", "F", h); err == nil {
		t.Error("Handle with empty servant: nil error")
	}
	if err := s.Handle("S", "", h); err == nil {
		t.Error("Handle with empty function: nil error")
	}
	if err := s.Handle("S", "F", nil); err == nil {
		t.Error("Handle with nil handler: nil error")
	}
	if err := s.Handle("S", "F", h); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if err := s.Handle("S", "F", h); err == nil {
		t.Error("duplicate Handle: nil error")
	}
	if s.Addr() != nil {
		t.Errorf("Addr before Start = %v", s.Addr())
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr().String() != addr.String() {
		t.Errorf("Addr() = %v, want %v", s.Addr(), addr)
	}
	if err := s.Handle("S", "G", h); !errors.Is(err, ErrStarted) {
		t.Errorf("Handle after Start: %v, want ErrStarted", err)
	}
	if _, err := s.Start("127.0.0.1:0"); !errors.Is(err, ErrStarted) {
		t.Errorf("second Start: %v, want ErrStarted", err)
	}

	// A second server on the same address fails to start and leaves nothing running.
	s2 := New(WithWorkers(2))
	if _, err := s2.Start(addr.String()); err == nil {
		t.Error("Start on a busy address: nil error")
	}
	if err := s2.Stop(ctx); err != nil {
		t.Errorf("Stop after failed Start: %v", err)
	}

	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := s.Handle("S", "H", h); !errors.Is(err, ErrStopped) {
		t.Errorf("Handle after Stop: %v, want ErrStopped", err)
	}
	if err := New().Stop(ctx); err != nil {
		t.Errorf("Stop of a server never started: %v", err)
	}
}

// stopOnCleanup stops s when the test ends, in case the test failed before it did.
func stopOnCleanup(t *testing.T, s *Server) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = s.Stop(ctx)
	})
}
