package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestStopGivenUpRefusesQueued: a Stop whose ctx ends while the server's one worker is held by a
// handler that ignores its ctx answers the requests queued behind it as it refuses new ones (-9,
// codec.StoppingDesc: they did not run, and a tarscomm client sends them elsewhere), then closes
// the connection. Before, they were dropped and the connection closed under them: their client
// could not tell them from the call that was running, and failed them.
func TestStopGivenUpRefusesQueued(t *testing.T) {
	leakCheck(t)
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	var ran atomic.Int32
	s := New(WithWorkers(1), WithNumEventLoop(1))
	mustHandle(t, s, pbServant, "Held", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
		ran.Add(1)
		started <- struct{}{}
		<-release // only the test ends it, not Stop
		return append(rsp, req...), nil
	})
	stopOnCleanup(t, s)
	released := false
	t.Cleanup(func() { // before the Stop above (cleanups run last first)
		if !released {
			close(release)
		}
	})
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, a.String())
	var frames []byte
	for i := range 4 {
		req := request(int32(i+1), pbServant, "Held", []byte{byte('a' + i)})
		req.Timeout = int32(largeTimeout / time.Millisecond)
		frames = codec.AppendRequest(frames, req)
	}
	c.write(frames)
	select {
	case <-started: // request 1 runs; 2, 3 and 4 wait for the worker
	case <-time.After(testTimeout):
		t.Fatal("the first request did not start")
	}
	eventually(t, "four requests handed to the worker queue", func() bool { return s.inflight.Load() == 4 })

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with a handler that ignores its ctx: %v, want %v", err, context.DeadlineExceeded)
	}
	for want := int32(2); want <= 4; want++ {
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("reading the answer to queued request %d: %v (the connection closed without it)", want, err)
		}
		rsp := new(codec.ResponsePacket)
		if err := codec.DecodeResponse(f, rsp); err != nil {
			t.Fatal(err)
		}
		if rsp.RequestID != want || rsp.Ret != codec.RetOverload || rsp.ResultDesc != codec.StoppingDesc {
			t.Fatalf("answer to queued request %d: id %d ret %d %q, want ret %d %q", want, rsp.RequestID, rsp.Ret, rsp.ResultDesc, codec.RetOverload, codec.StoppingDesc)
		}
	}
	c.expectClosed() // request 1 ran and is not answered: its connection is gone
	released = true
	close(release)
	sctx, scancel := context.WithTimeout(context.Background(), testTimeout)
	defer scancel()
	if err := s.Stop(sctx); err != nil {
		t.Fatalf("second Stop, the handler released: %v", err)
	}
	if n := ran.Load(); n != 1 {
		t.Fatalf("the handler ran %d times, want 1 (the queued requests were refused, not run)", n)
	}
}
