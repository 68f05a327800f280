package asyncproc

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// barrier lets n callbacks wait (boundedly) until all n run at once.
type barrier struct {
	n       int64
	entered atomic.Int64
	all     chan struct{}
	once    sync.Once
}

func newBarrier(n int) *barrier {
	return &barrier{n: int64(n), all: make(chan struct{})}
}

func (b *barrier) wait() bool {
	if b.entered.Add(1) == b.n {
		b.once.Do(func() { close(b.all) })
	}
	select {
	case <-b.all:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// TestGoexitsAtOnceKeepEveryWorker: several callbacks calling runtime.Goexit at the same
// time each replace their worker (Pool.replace), and every replacement is listed (self knows it).
// Before, replace was a load, copy and store of the workers slice with no lock: two replacements
// at once lost one of them, whose goroutine still ran callbacks unknown to self (a Close from a
// callback on it would have taken itself for an outsider and waited for itself forever).
func TestGoexitsAtOnceKeepEveryWorker(t *testing.T) {
	const workers = 16
	p := newPool(t, Options{Workers: workers, QueueCap: 4 * workers})
	defer p.Close()
	for round := 1; round <= 200; round++ {
		b := newBarrier(workers)
		for range workers {
			deliver(t, p, func() {
				b.wait()
				runtime.Goexit()
			})
		}
		for deadline := time.Now().Add(10 * time.Second); p.Pending() != 0 || p.Goexits() != int64(round*workers); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d callbacks pending, %d Goexits; want 0 and %d", round, p.Pending(), p.Goexits(), round*workers)
			}
		}
		// Every worker now runs one callback at once; each asks whether the pool knows it.
		b = newBarrier(workers)
		var unknown, alone atomic.Int64
		var wg sync.WaitGroup
		wg.Add(workers)
		for range workers {
			deliver(t, p, func() {
				defer wg.Done()
				if !b.wait() {
					alone.Add(1)
				}
				if p.self() == nil {
					unknown.Add(1)
				}
			})
		}
		wg.Wait()
		if alone.Load() != 0 {
			t.Fatalf("round %d: %d of %d callbacks did not run at once with the others: the pool has fewer than %d workers",
				round, alone.Load(), workers, workers)
		}
		if n := unknown.Load(); n != 0 {
			dead := 0
			for _, w := range p.listed() {
				if w.exited() {
					dead++
				}
			}
			t.Fatalf("round %d: after %d callbacks called runtime.Goexit at once, %d of the %d running workers are not in "+
				"the pool's list (which holds %d exited workers instead): replace lost a concurrent replacement; "+
				"want every replacement listed (Close from a callback on such a worker would wait for itself forever)",
				round, workers, n, workers, dead)
		}
	}
}

// TestGoexitInsideWaitKeepsWaiter: a callback A waits on its worker (Pool.Wait, a future's Get)
// while a stand-in runs the queued callbacks; one of them, B, calls runtime.Goexit: only B ends,
// and A resumes. Before, Wait ran the queued callbacks on A's own stack, and B's Goexit unwound
// A too: A's Wait never returned.
func TestGoexitInsideWaitKeepsWaiter(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer p.Close()
	resumed := make(chan error, 1)
	aEnded := make(chan struct{})
	done := make(chan struct{})
	deliver(t, p, func() {
		defer close(aEnded)
		deliver(t, p, func() { runtime.Goexit() }) // B: queued first
		deliver(t, p, func() { close(done) })      // C: what A waits for
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resumed <- p.Wait(ctx, done)
	})
	select {
	case <-aEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("callback A did not end")
	}
	select {
	case err := <-resumed:
		if err != nil {
			t.Fatalf("A's Wait: %v, want nil", err)
		}
	default:
		t.Fatalf("callback A, waiting in Pool.Wait, never returned from it: another callback it ran meanwhile called "+
			"runtime.Goexit, which ended A too (Goexits()=%d); want only that callback ended and A resumed", p.Goexits())
	}
}

// TestWaitReturnsWhenDoneWhileHelping: Wait (a future's Get on a worker) returns nil once done is
// closed, whatever the stand-in runs meanwhile. Before, Wait ran a queued callback on its own
// stack and returned only when that callback did: the Get stayed blocked as long as the
// unrelated callback B it had picked up.
func TestWaitReturnsWhenDoneWhileHelping(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer p.Close()
	bStarted := make(chan struct{})
	releaseB := make(chan struct{})
	done := make(chan struct{})
	waited := make(chan error, 1)
	deliver(t, p, func() {
		deliver(t, p, func() { close(bStarted); <-releaseB }) // B: unrelated, long
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		waited <- p.Wait(ctx, done)
	})
	select {
	case <-bStarted:
	case <-time.After(5 * time.Second):
		close(releaseB)
		t.Fatal("B did not start")
	}
	close(done) // the future completes (from another goroutine)
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("Wait: %v, want nil (done was closed)", err)
		}
		close(releaseB)
	case <-time.After(3 * time.Second):
		close(releaseB)
		err := <-waited
		t.Errorf("Wait (a future's Get on a worker) had not returned 3s after done was closed, and 2.7s after its "+
			"ctx expired: it was running an unrelated callback on its stack (it returned %v once that callback "+
			"was released); want it to return when done closes or its ctx ends", err)
	}
}
