package asyncproc

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestPolledNotResetByOtherGoroutine: with Workers 1, a callback A polls a future (Gets
// with a 100us ctx, 2 ms of other work between polls) whose completion is a callback C queued behind
// A, exactly as TestShortPollsLend does, while another goroutine G, no callback, does ordinary Gets
// of futures that complete within a few microseconds (a request handler using tarscomm futures
// synchronously): C runs while A polls, since the mark of a polling worker is its own (only its
// own waits and its callback's return clear it). Before, a global flag that A's timed-out polls
// set was cleared by G's next successful wait, so A's next poll took the 1 ms timer path again and
// ended by its ctx before looking itself up: C never ran while A polled.
func TestPolledNotResetByOtherGoroutine(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer p.Close()

	stopG := make(chan struct{})
	var gWaits int
	var gwg sync.WaitGroup
	gwg.Add(1)
	go func() { // G: a goroutine of the application doing Gets of quick futures
		defer gwg.Done()
		for {
			select {
			case <-stopG:
				return
			default:
			}
			done := make(chan struct{})
			go func() { // the future completes 20us later (spinning: a timer can be as coarse as 1ms)
				for s := time.Now(); time.Since(s) < 20*time.Microsecond; {
					runtime.Gosched()
				}
				close(done)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := p.Wait(ctx, done); err != nil {
				t.Errorf("G's wait: %v", err)
			}
			cancel()
			gWaits++
		}
	}()

	cDone := make(chan struct{})
	aDone := make(chan struct{})
	var polls, timeouts int
	var ranWhilePolling bool
	deliver(t, p, func() { // A
		defer close(aDone)
		deliver(t, p, func() { close(cDone) }) // C: completes A's future
		for range 30 {
			ctx, cancel := shortCtx(100 * time.Microsecond)
			err := p.Wait(ctx, cDone)
			cancel()
			polls++
			if err == nil {
				break
			}
			timeouts++
			time.Sleep(2 * time.Millisecond) // A's other work between polls
		}
		select {
		case <-cDone:
			ranWhilePolling = true
		default:
		}
	})
	select {
	case <-aDone:
	case <-time.After(10 * time.Second):
		t.Fatal("A's polling loop did not end")
	}
	close(stopG)
	gwg.Wait()
	if !ranWhilePolling {
		t.Errorf("a one-worker pool's callback polled a future (%d Gets with a 100us ctx, %d timed out, 2ms of work "+
			"between them) whose completion is the callback queued behind it, while another goroutine did %d Gets of "+
			"quick futures: that callback never ran while it polled; want a stand-in lent as in TestShortPollsLend. "+
			"The global polled flag, set by A's timed-out polls, is cleared by any other goroutine's wait that ends "+
			"with its future, so each of A's polls waits for the 1 ms timer and ends by its ctx first",
			polls, timeouts, gWaits)
	}
}
