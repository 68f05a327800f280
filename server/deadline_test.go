package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/handlerctx"
)

// seenCtx is what a handler saw of its ctx.
type seenCtx struct {
	ctx      context.Context
	deadline time.Time
	has      bool
	errIn    error // ctx.Err() while the handler ran
}

// TestHandlerDeadline: a request that carries its client's timeout is handled with a ctx whose
// deadline is that timeout after the request was read (between the test's write and the
// handler's call), live while the handler runs and ended (context.Canceled, Done closed) once it
// returned; a request without a timeout gets a ctx without a deadline, which ends when the
// handler returns too. Inline and worker mode, TCP and UDP.
func TestHandlerDeadline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		udp     bool
		workers int
	}{{"inline", false, 0}, {"workers", false, 2}, {"udp inline", true, 0}, {"udp workers", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			seen := make(chan seenCtx, 4)
			setup := func(s *Server) {
				mustHandle(t, s, "App.S.Obj", "Look", func(ctx context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
					d, ok := ctx.Deadline()
					seen <- seenCtx{ctx: ctx, deadline: d, has: ok, errIn: ctx.Err()}
					return append(rsp, req...), nil
				})
			}
			var roundTrip func(r *codec.RequestPacket) *codec.ResponsePacket
			if tc.udp {
				_, uc := startUDP(t, setup, WithWorkers(tc.workers))
				roundTrip = func(r *codec.RequestPacket) *codec.ResponsePacket { return callUDP(t, uc, r) }
			} else {
				_, addr := startServer(t, setup, WithWorkers(tc.workers))
				c := dial(t, addr)
				roundTrip = func(r *codec.RequestPacket) *codec.ResponsePacket {
					c.write(codec.AppendRequest(nil, r))
					return c.recv()
				}
			}
			call := func(id, timeoutMS int32) (seenCtx, time.Time, time.Time) {
				t.Helper()
				r := request(id, "App.S.Obj", "Look", []byte("x"))
				r.Timeout = timeoutMS
				before := time.Now()
				rsp := roundTrip(r)
				after := time.Now()
				if rsp.RequestID != id || rsp.Ret != codec.RetOK || string(rsp.Buffer) != "x" {
					t.Fatalf("reply id %d ret %d %q body %q", rsp.RequestID, rsp.Ret, rsp.ResultDesc, rsp.Buffer)
				}
				select {
				case sc := <-seen:
					return sc, before, after
				case <-time.After(testTimeout):
					t.Fatal("the handler did not run")
					return seenCtx{}, before, after
				}
			}

			sc, before, after := call(1, 60000)
			if !sc.has {
				t.Fatal("a request with a 60 s timeout: the handler's ctx has no deadline")
			}
			if lo, hi := before.Add(time.Minute), after.Add(time.Minute); sc.deadline.Before(lo) || sc.deadline.After(hi) {
				t.Errorf("deadline %v not within [%v, %v]: the request's read plus its timeout", sc.deadline, lo, hi)
			}
			if sc.errIn != nil {
				t.Errorf("ctx.Err() while the handler ran: %v", sc.errIn)
			}
			// The reply was written after the handler returned: its ctx has ended.
			if err := sc.ctx.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("ctx.Err() after the handler returned: %v, want context.Canceled", err)
			}
			if !closed(sc.ctx.Done()) {
				t.Error("ctx.Done() not closed after the handler returned")
			}
			if cause := context.Cause(sc.ctx); !errors.Is(cause, context.Canceled) {
				t.Errorf("context.Cause after the handler returned: %v", cause)
			}

			sc, _, _ = call(2, 0)
			if sc.has {
				t.Errorf("a request without a timeout: the handler's ctx has deadline %v", sc.deadline)
			}
			if sc.errIn != nil {
				t.Errorf("a request without a timeout: ctx.Err() while the handler ran: %v", sc.errIn)
			}
			// It ends when the handler returns too (it never ended: work tied to it leaked).
			if err := sc.ctx.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("a request without a timeout: ctx.Err() after the handler returned: %v, want context.Canceled", err)
			}
			if !closed(sc.ctx.Done()) {
				t.Error("a request without a timeout: ctx.Done() not closed after the handler returned")
			}
		})
	}
}

// TestHandlerDeadlineExpires: a handler that waits on its ctx is ended at its client's deadline
// (context.DeadlineExceeded, as context.Cause says too), and a ctx derived from it ends with it.
// The client's timeout is 200 ms; the handler's own bound is testTimeout.
func TestHandlerDeadlineExpires(t *testing.T) {
	for _, workers := range []int{0, 1} {
		t.Run(fmt.Sprintf("workers %d", workers), func(t *testing.T) { handlerDeadlineExpires(t, workers) })
	}
}

func handlerDeadlineExpires(t *testing.T, workers int) {
	leakCheck(t)
	type result struct{ err, cause, child error }
	got := make(chan result, 1)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Wait", func(ctx context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			select {
			case <-child.Done():
			case <-time.After(testTimeout):
			}
			got <- result{ctx.Err(), context.Cause(ctx), child.Err()}
			return rsp, ctx.Err()
		})
	}, WithWorkers(workers))
	c := dial(t, addr)
	r := request(1, "App.S.Obj", "Wait", nil)
	r.Timeout = 200
	c.write(codec.AppendRequest(nil, r))
	if rsp := c.recv(); rsp.Ret != codec.RetUnknown || rsp.ResultDesc != context.DeadlineExceeded.Error() {
		t.Errorf("workers %d: reply ret %d %q, want the handler's DeadlineExceeded", workers, rsp.Ret, rsp.ResultDesc)
	}
	res := <-got
	if !errors.Is(res.err, context.DeadlineExceeded) || !errors.Is(res.cause, context.DeadlineExceeded) ||
		!errors.Is(res.child, context.DeadlineExceeded) {
		t.Errorf("workers %d: at the deadline Err %v, Cause %v, a child's Err %v; want DeadlineExceeded",
			workers, res.err, res.cause, res.child)
	}
}

// TestCallCtxWithoutTimer: Err and Value answer without making the timer while the deadline is
// ahead, and end makes none; an ended ctx reads Canceled, an expired one DeadlineExceeded (Err
// and context.Cause), though Done was never asked for; Done is then closed.
func TestCallCtxWithoutTimer(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	s := New()
	var ctxs callCtxs
	c := ctxs.next(parent, s, s.clock()+int64(time.Hour))
	if c.Err() != nil || c.Value(key{}) != "v" {
		t.Fatalf("live ctx: Err %v, Value %v", c.Err(), c.Value(key{}))
	}
	if c.timed.Load() != nil {
		t.Fatal("Err or Value made the timer")
	}
	if d, ok := c.Deadline(); !ok || d.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("Deadline %v %v, want an hour from now", d, ok)
	}
	// A ctx made from it by adding values finds it and is unwatched, until a ctx with a cancel
	// of its own is made from it (which asks its Done).
	valued := context.WithValue(c, key{}, "w")
	if valued.Value(handlerctx.Key{}) != c || !handlerctx.Unwatched(c) || !handlerctx.Unwatched(valued) || c.DoneAsked() {
		t.Fatalf("value-only child: Key %v, unwatched %v/%v, DoneAsked %v", valued.Value(handlerctx.Key{}),
			handlerctx.Unwatched(c), handlerctx.Unwatched(valued), c.DoneAsked())
	}
	if c.timed.Load() != nil {
		t.Fatal("a value-only child made the timer")
	}
	other := ctxs.next(parent, s, s.clock()+int64(time.Hour))
	other.end()
	if other.timed.Load() != nil {
		t.Fatal("end made the timer")
	}
	// A value-only child used after its handler returned ends at once: a call made with it
	// fails before it is sent (servantproxy checks Err first).
	if err := context.WithValue(other, key{}, "x").Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("a value-only child after end: Err %v, want Canceled", err)
	}
	own, cancel := context.WithCancel(valued)
	defer cancel()
	if !c.DoneAsked() || handlerctx.Unwatched(own) || handlerctx.Unwatched(valued) || !handlerctx.Unwatched(c) {
		t.Fatalf("after WithCancel: DoneAsked %v, unwatched own %v, valued %v, c %v", c.DoneAsked(),
			handlerctx.Unwatched(own), handlerctx.Unwatched(valued), handlerctx.Unwatched(c))
	}
	c.end()
	if !closed(own.Done()) {
		t.Fatal("after end: the cancel child's Done not closed")
	}
	if !errors.Is(valued.Err(), context.Canceled) { // a call made with it after end fails at once
		t.Fatalf("after end: the value-only child's Err %v, want Canceled", valued.Err())
	}
	if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), context.Canceled) {
		t.Fatalf("after end: Err %v, Cause %v", c.Err(), context.Cause(c))
	}
	if !closed(c.Done()) {
		t.Fatal("after end: Done not closed")
	}

	expired := ctxs.next(parent, s, s.clock()-int64(time.Millisecond))
	if !errors.Is(expired.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(expired), context.DeadlineExceeded) {
		t.Fatalf("expired: Err %v, Cause %v", expired.Err(), context.Cause(expired))
	}
	if !closed(expired.Done()) {
		t.Fatal("expired: Done not closed")
	}
	if expired.Value(key{}) != "v" {
		t.Fatal("expired: the parent's value is lost")
	}
}

// closed reports whether ch is closed (without waiting).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
