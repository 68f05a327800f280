package asyncproc

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestShortPollsLend: with Workers 1, a callback A polls a future whose completion is a callback
// C queued behind A (a call's future), with Gets of a short ctx (100 us, below lendAfter) 40
// times: C runs while A polls (after a wait ended by its ctx, the next ones lend at once:
// workers.go's polled). Before, no Wait ever lent a stand-in (each ended before its own 1 ms
// timer), so C never ran while A polled: a loop bounded only by C's result wedged the worker.
func TestShortPollsLend(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer p.Close()
	done := make(chan struct{})
	var polls, timeouts int
	var waited time.Duration
	var ranWhilePolling bool
	aDone := make(chan struct{})
	deliver(t, p, func() { // A
		defer close(aDone)
		deliver(t, p, func() { close(done) }) // C: completes A's future
		start := time.Now()
		for range 40 {
			ctx, cancel := shortCtx(100 * time.Microsecond)
			err := p.Wait(ctx, done)
			cancel()
			polls++
			if err == nil {
				break
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Wait: %v", err)
				break
			}
			timeouts++
		}
		waited = time.Since(start)
		select {
		case <-done:
			ranWhilePolling = true
		default:
		}
	})
	select {
	case <-aDone:
	case <-time.After(5 * time.Second):
		t.Fatal("A's polling loop did not end")
	}
	if !ranWhilePolling {
		t.Errorf("a one-worker pool's callback polled a future (%d Gets with a 100us ctx, %d timed out, %v in all) whose "+
			"completion is the callback queued behind it: that callback never ran while it polled; want a stand-in lent "+
			"once the callback has waited lendAfter (1ms) in all, as a single Get of 2ms gets one", polls, timeouts, waited)
	}
}

// shortCtx is a ctx that ends after d, precisely: a spinning goroutine cancels it (a timer's
// wakeup can be as coarse as lendAfter, which would blur which of the two ends a Wait first).
func shortCtx(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	go func() {
		for time.Since(start) < d && ctx.Err() == nil {
			runtime.Gosched()
		}
		cancel()
	}()
	return ctx, cancel
}
