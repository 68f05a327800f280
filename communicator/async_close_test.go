package communicator_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestCloseFromAsyncCallback calls Close inside an async callback while other async calls are in
// flight to a server that does not answer them: Close must return there (today it waited for the
// callback's own slot, forever), having run every other callback once with ErrClosed; none runs
// after it, later calls fail with ErrClosed, and once the callback returns no goroutine is left
// (TestMain checks).
func TestCloseFromAsyncCallback(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprint("asyncthread=", workers), func(t *testing.T) {
			slow := startGreeter(t, "slow", serverOpt{block: true})
			fast := startGreeter(t, "fast", serverOpt{})
			comm := newComm(t, func(c *conf.Config) { c.AsyncThread = workers })
			spSlow, spFast := proxyTo(t, comm, slow), taggedProxyTo(t, comm, "fast", fast)
			ctx := testCtx(t)

			const n = 50
			var ran, late atomic.Int64
			var closeReturned atomic.Bool
			var wrong atomic.Value
			for i := range n {
				err := spSlow.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "s", Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
					if closeReturned.Load() {
						late.Add(1)
					}
					if !errors.Is(err, communicator.ErrClosed) {
						wrong.CompareAndSwap(nil, fmt.Errorf("in-flight call ended with %v, want ErrClosed", err))
					}
					ran.Add(1)
				})
				if err != nil {
					t.Fatal(err)
				}
			}

			type result struct {
				err       error
				ranBefore int64
			}
			inCallback := make(chan result, 1)
			callbackDone := make(chan struct{})
			err := spFast.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "c"}, new(hellopb.HelloReply), func(err error) {
				defer close(callbackDone)
				if err != nil {
					inCallback <- result{err: err}
					return
				}
				cerr := comm.Close()
				closeReturned.Store(true)
				inCallback <- result{err: cerr, ranBefore: ran.Load()}
				time.Sleep(10 * time.Millisecond) // the callback goes on after Close
			})
			if err != nil {
				t.Fatal(err)
			}
			var r result
			select {
			case r = <-inCallback:
			case <-time.After(15 * time.Second):
				t.Fatalf("Close called inside an async callback did not return; goroutines:\n%s", allStacks())
			}
			if r.err != nil {
				t.Fatalf("the closing callback: %v", r.err)
			}
			if r.ranBefore != n {
				t.Fatalf("%d of %d in-flight callbacks had run when Close returned in a callback", r.ranBefore, n)
			}
			if e, _ := wrong.Load().(error); e != nil {
				t.Fatal(e)
			}
			<-callbackDone
			if err := closeComm(t, comm); err != nil { // again, from outside: waits for the rest
				t.Fatal(err)
			}
			if got := late.Load(); got != 0 {
				t.Fatalf("%d callbacks ran after Close returned", got)
			}
			if got := ran.Load(); got != n {
				t.Fatalf("%d callbacks ran, want %d", got, n)
			}
			err = spFast.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(error) {
				t.Error("callback of a call refused after Close ran")
			})
			if !errors.Is(err, communicator.ErrClosed) {
				t.Fatalf("AsyncInvoke after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestCloseFromCallbackAndOutside closes from a callback and from another goroutine at the same
// time: both return, and every callback has run once when the outside Close returns.
func TestCloseFromCallbackAndOutside(t *testing.T) {
	slow := startGreeter(t, "slow", serverOpt{block: true})
	fast := startGreeter(t, "fast", serverOpt{})
	comm := newComm(t, nil)
	spSlow, spFast := proxyTo(t, comm, slow), taggedProxyTo(t, comm, "fast", fast)
	ctx := testCtx(t)

	const n = 20
	var wg sync.WaitGroup
	var ran atomic.Int64
	for range n {
		wg.Add(1)
		if err := spSlow.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(error) { ran.Add(1); wg.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	start := make(chan struct{})
	inside := make(chan error, 1)
	if err := spFast.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(error) {
		<-start
		inside <- comm.Close()
	}); err != nil {
		t.Fatal(err)
	}
	outside := make(chan error, 1)
	go func() { outside <- comm.Close() }()
	close(start)
	for _, ch := range []chan error{inside, outside} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("a Close did not return; goroutines:\n%s", allStacks())
		}
	}
	if got := ran.Load(); got != n {
		t.Fatalf("%d of %d callbacks had run when both Close calls returned", got, n)
	}
	wg.Wait()
}

// taggedProxyTo binds a ServantProxy of its own (TARS "Obj#tag@...") to g: proxyTo would return
// the proxy of the first greeter bound to the same servant name.
func taggedProxyTo(t *testing.T, c *communicator.Communicator, tag string, g *greeter) *servantproxy.ServantProxy {
	t.Helper()
	var sp servantproxy.ServantProxy
	if err := c.StringToProxy(servant+"#"+tag+"@"+g.endpoint(), &sp); err != nil {
		t.Fatal(err)
	}
	return &sp
}
