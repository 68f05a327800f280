package server

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestQueueBytes: in worker mode, one client pipelining large requests to a busy worker gets no
// more of them queued than WithQueueBytes holds; the others are answered RetOverload at once, and
// every request is answered. The queue used to be bounded by its count of requests only, so one
// connection could make the server hold queue-cap x max-packet-size (10000 x 10 MiB by default).
func TestQueueBytes(t *testing.T) {
	leakCheck(t)
	const (
		n, size = 16, 1 << 20
		limit   = 4 << 20
	)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Hold", func(ctx context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
			select {
			case started <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return rsp, nil
		})
	}, WithWorkers(1), WithNumEventLoop(1), WithQueueBytes(limit))
	c := dial(t, addr)
	c.write(codec.AppendRequest(nil, request(1, pbServant, "Hold", nil)))
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("the handler did not start")
	}
	frame := codec.AppendRequest(nil, request(2, pbServant, "Hold", bigBody(size, 1)))
	for range n {
		c.write(frame)
	}
	// The refusals come at once, while the worker still holds the first request.
	refused := 0
	for refused < n-limit/size {
		rsp := c.recv()
		if rsp.Ret != codec.RetOverload {
			t.Fatalf("reply %d while the worker is busy: ret %d (%q), want RetOverload", refused+1, rsp.Ret, rsp.ResultDesc)
		}
		refused++
	}
	close(release)
	ok := 0
	for range n + 1 - refused {
		rsp := c.recv()
		switch rsp.Ret {
		case codec.RetOK:
			ok++
		case codec.RetOverload:
			refused++
		default:
			t.Fatalf("ret %d (%q)", rsp.Ret, rsp.ResultDesc)
		}
	}
	if queued := ok - 1; queued < 1 || queued > limit/size {
		t.Fatalf("%d of %d requests of %d MiB queued behind the busy worker, want 1 to %d (queue bytes %d MiB)", queued, n, size>>20, limit/size, limit>>20)
	}
	t.Logf("%d queued, %d refused", ok-1, refused)
}
