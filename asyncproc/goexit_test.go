package asyncproc

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// deliver reserves a slot and delivers fn as a callback.
func deliver(t *testing.T, p *Pool, fn func()) {
	t.Helper()
	if err := p.Reserve(); err != nil {
		t.Fatal(err)
	}
	p.Deliver(&call.Call{Finish: func(*call.Call) { fn() }})
}

// TestGoexitReplacesWorker: a callback that ends its goroutine with runtime.Goexit (t.FailNow in
// a test's callback) takes its worker with it, and another worker takes its place: with one
// worker, the callbacks after it still run, Goexits counts it, and Close returns. Before, the
// worker was gone for good: no callback ran again and Close waited forever.
func TestGoexitReplacesWorker(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	deliver(t, p, func() { runtime.Goexit() })
	ran := make(chan struct{})
	deliver(t, p, func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("no callback ran after one called runtime.Goexit: its worker was not replaced")
	}
	if got := p.Goexits(); got != 1 {
		t.Fatalf("Goexits() = %d, want 1", got)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after a worker was replaced")
	}
}

// TestWaitOnWorkerRunsCallbacks: a callback that waits (Pool.Wait, what a future's Get does) for
// something only another callback brings runs the waiting callbacks meanwhile: with one worker
// the wait ends. Before, a Get of a call's future in a callback waited for itself.
func TestWaitOnWorkerRunsCallbacks(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer p.Close()
	waited := make(chan error, 1)
	done := make(chan struct{})
	deliver(t, p, func() {
		deliver(t, p, func() { close(done) }) // queued behind this callback, on the one worker
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		waited <- p.Wait(ctx, done)
	})
	if err := <-waited; err != nil {
		t.Fatalf("Wait on the worker: %v; want nil (it runs the callback that closes done)", err)
	}
}
