package asyncproc

import (
	"runtime"
	"testing"
	"time"
)

// TestGoexitInsideCloseKeepsCloser: a callback A calls Close (closeFromWorker), whose stand-in
// runs the queued callbacks; one of them, B, calls runtime.Goexit (t.FailNow in a test's
// callback). Only B ends: A's Close returns and the pool is stopped. Before, Close ran the queued
// callbacks on A's own stack, and B's Goexit unwound A too: A's Close never returned, and the
// pool stayed open, its workers alive until somebody else called Close.
func TestGoexitInsideCloseKeepsCloser(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	closeReturned := make(chan struct{})
	aEnded := make(chan struct{})
	afterB := make(chan struct{})
	// A closes once B and C are queued (before, A could close first, refusing C).
	queued := make(chan struct{})
	deliver(t, p, func() { // A
		defer close(aEnded)
		<-queued
		p.Close()
		close(closeReturned)
	})
	deliver(t, p, func() { runtime.Goexit() }) // B: run by A's Close
	deliver(t, p, func() { close(afterB) })    // C
	close(queued)
	select {
	case <-aEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("callback A did not end")
	}
	returned := false
	select {
	case <-closeReturned:
		returned = true
	default:
	}
	select {
	case <-afterB:
	case <-time.After(5 * time.Second):
		t.Error("callback C, queued before Close could return, never ran")
	}
	stopped := p.stopped.Load()
	p.Close() // from outside: stops the replacement worker left running
	if !returned || !stopped {
		t.Fatalf("a callback run by Close-from-a-callback called runtime.Goexit: Close returned in the calling callback: %v, "+
			"pool stopped: %v (Goexits()=%d); want only that callback ended, the Close returning and the pool stopped "+
			"(the Goexit unwound the caller's Close, which runs queued callbacks on its stack)", returned, stopped, p.Goexits())
	}
}
