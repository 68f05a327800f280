package future

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestGoexitInOnDoneKeepsOthers: Complete promises that a callback that fails does
// not keep the others from running, "a WhenAll or Join waiting on f is one of them". A callback
// that ends its goroutine with runtime.Goexit (t.FailNow or t.Fatal in a callback, the case
// asyncproc replaces its worker for: a tarscomm future's OnDone runs on an async worker) is not
// recovered by run's recover, so Complete stopped there before: the callbacks registered after it
// never ran, and a Join of f (a WhenAll's callback) waited until its ctx ended although f had
// completed. Complete now runs the rest from a deferred call, which a Goexit runs too.
func TestGoexitInOnDoneKeepsOthers(t *testing.T) {
	f := Make[int]()
	f.OnDone(func(int, error) { runtime.Goexit() }) // e.g. a t.FailNow in a test's callback
	ran := make(chan struct{})
	f.OnDone(func(int, error) { close(ran) })
	all := WhenAll(f) // what a Join of f, waiting when f completes, waits on

	completed := make(chan struct{})
	go func() {
		defer close(completed)
		f.Complete(7, nil)
	}()
	select {
	case <-completed:
	case <-time.After(5 * time.Second):
		t.Fatal("Complete's goroutine did not end within 5s")
	}
	if !f.Done() {
		t.Fatal("f is not done after Complete")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, joinErr := all.Get(ctx) // Join(ctx, f) begun before the completion
	select {
	case <-ran:
	default:
		t.Errorf("the OnDone callback registered after the one that called runtime.Goexit never ran")
	}
	if joinErr != nil {
		t.Errorf("WhenAll(f).Get (a Join) of a completed f = %v (WhenAll(f) done: %v); want nil: the Goexit of one "+
			"callback kept WhenAll's callback from running", joinErr, all.Done())
	}
}

// TestGoexitInLaterOnDoneKeepsOthers: the same with the Goexit in the second of four callbacks
// and again in the third: the first and the fourth run, once each.
func TestGoexitInLaterOnDoneKeepsOthers(t *testing.T) {
	f := Make[int]()
	var ran [4]int
	f.OnDone(func(int, error) { ran[0]++ })
	f.OnDone(func(int, error) { ran[1]++; runtime.Goexit() })
	f.OnDone(func(int, error) { ran[2]++; runtime.Goexit() })
	f.OnDone(func(int, error) { ran[3]++ })
	completed := make(chan struct{})
	go func() {
		defer close(completed)
		f.Complete(7, nil)
	}()
	select {
	case <-completed:
	case <-time.After(5 * time.Second):
		t.Fatal("Complete's goroutine did not end within 5s")
	}
	if ran != [4]int{1, 1, 1, 1} {
		t.Fatalf("callbacks ran %v times, want each once", ran)
	}
}
