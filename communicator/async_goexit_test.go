package communicator_test

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestAsyncGoexitKeepsWorkers: an async callback that ends its goroutine with
// runtime.Goexit (t.FailNow or t.Fatal in a test's callback is the usual way) ends its async
// worker's goroutine: asyncproc's recover does not stop a Goexit. Before, the worker's loop ended
// and nothing replaced it or logged it (before: with asyncthread = 2, after one such callback
// only one worker was left, and with asyncthread = 1 no callback ever ran again). Now another
// worker takes its place (asyncproc's replace; asyncproc's TestGoexitReplacesWorker has the one
// worker case): two callbacks still run at once after the Goexit.
func TestAsyncGoexitKeepsWorkers(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) { c.AsyncThread = 2 })
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	exited := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply), func(error) {
		defer func() { exited <- nil }()
		runtime.Goexit() // what t.FailNow does
	}); err != nil {
		t.Fatalf("AsyncInvoke: %v", err)
	}
	if err := waitErr(exited, live, "the Goexit callback"); err != nil {
		t.Fatal(err)
	}

	// Two callbacks that each wait (boundedly) for the other to be running too: they meet only
	// if two workers run callbacks.
	var entered atomic.Int64
	both := make(chan struct{})
	results := make(chan error, 2)
	for i := range 2 {
		if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "y", Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			if err != nil {
				results <- err
				return
			}
			if entered.Add(1) == 2 {
				close(both)
			}
			select {
			case <-both:
				results <- nil
			case <-time.After(3 * time.Second):
				results <- errors.New("this callback ran alone for 3s: the other one waited for a worker")
			}
		}); err != nil {
			t.Fatalf("AsyncInvoke: %v", err)
		}
	}
	for range 2 {
		if err := waitErr(results, live, "callback"); err != nil {
			t.Errorf("%v; want two callbacks at once with asyncthread=2 "+
				"(a callback's runtime.Goexit left the pool a worker short)", err)
		}
	}
}
