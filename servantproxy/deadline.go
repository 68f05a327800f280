package servantproxy

import (
	"context"
	"math"
	"time"

	"github.com/tarscomm/tarscomm/internal/handlerctx"
)

// Deadline arithmetic. Deadlines are call.Now nanoseconds in an int64; a timeout near
// math.MaxInt64 (WithTimeout(math.MaxInt64)) or a context deadline centuries away would overflow
// now+timeout into the past and fail the call at once with ErrTimeout. Every sum saturates
// instead: such a deadline is simply "never" (math.MaxInt64, 292 years of uptime).

// addSat returns a+b, clamped to the int64 range instead of wrapping.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// deadlineOf returns the deadline of a call starting at now (call.Now clock) with timeout: the
// earlier of now+timeout and ctx's deadline, saturated.
func deadlineOf(ctx context.Context, now int64, timeout time.Duration) int64 {
	deadline := addSat(now, int64(timeout))
	if d, ok := ctx.Deadline(); ok {
		// time.Until saturates too: a deadline in the year 2500 is math.MaxInt64 away.
		if at := addSat(now, int64(time.Until(d))); at < deadline {
			deadline = at
		}
	}
	return deadline
}

// watched returns the channel a sync call watches to end early with its caller's ctx:
// ctx.Done(), or for a server handler's ctx or one made from it by adding values
// (internal/handlerctx), whose deadline the call already has as its own (deadlineOf) and whose
// timer it would otherwise make on every relayed request, the handler's StopDone: a server
// whose Stop gave up ends the calls its handlers wait on.
func watched(ctx context.Context) <-chan struct{} {
	if h, ok := handlerctx.Find(ctx); ok {
		return h.StopDone()
	}
	return ctx.Done()
}

// watchedAsync is watched for an async call, which outlives its handler: nil for a handler's
// ctx (the call ends by its deadline).
func watchedAsync(ctx context.Context) <-chan struct{} {
	if _, ok := handlerctx.Find(ctx); ok {
		return nil
	}
	return ctx.Done()
}
