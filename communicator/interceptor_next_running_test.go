package communicator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
)

// heldCtx is a ctx whose first Done call signals entered and waits for release: it holds a next
// that was handed it at a point after next began (servantproxy's asyncCtx asks it for Done), so
// that the interceptor returns while next is still running, every time. Without it the same
// happens by chance, with an interceptor that runs next on another goroutine and returns on a
// timer or its ctx (the "timeout interceptor" pattern).
type heldCtx struct {
	context.Context
	once             sync.Once
	entered, release chan struct{}
}

func (c *heldCtx) Done() <-chan struct{} {
	c.once.Do(func() {
		close(c.entered)
		<-c.release
	})
	return c.Context.Done()
}

// TestAsyncNextRunningWhenInterceptorReturnsGivesOneOutcome: an async call whose interceptor runs next on
// a goroutine and returns (nil) while that next is still under way. The doc's guard ("a second
// call, or one after it returned, makes no call and returns an error"; AsyncInvoke: "cb runs
// exactly once if AsyncInvoke returns nil, and never if it returns an error") holds only for a
// next that begins after the return: asyncCall (servantproxy/servantproxy.go) reads submitted and
// sendErr, which the running next writes, with no synchronisation (a data race, which -race
// reports), sees "not submitted, no error" and returns errNotSent, while next goes on to send
// the call, whose callback then runs. The caller is told the call was not sent (and no callback
// will come) and gets the callback too. Expected: one outcome: either AsyncInvoke returns nil
// and cb runs once, or it returns an error and cb never runs.
//
// viaHooks now waits for an async call's running next; before, AsyncInvoke returned errNotSent and the callback ran too (and -race saw the race).
func TestAsyncNextRunningWhenInterceptorReturnsGivesOneOutcome(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	var held atomic.Pointer[heldCtx]
	nextDone := make(chan error, 1)
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		h := held.Load()
		if h == nil {
			return next(ctx, info)
		}
		h.Context = ctx
		go func() { nextDone <- next(h, info) }()
		<-h.entered // next has begun
		return nil  // returns while next runs
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	h := &heldCtx{entered: make(chan struct{}), release: make(chan struct{})}
	held.Store(h)
	cb := make(chan error, 2)
	// next is let go a moment after the interceptor returned: AsyncInvoke may wait for it (it
	// must not decide while next runs), so the release cannot wait for AsyncInvoke's return.
	go func() {
		<-h.entered
		time.Sleep(100 * time.Millisecond)
		close(h.release)
	}()
	err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply), func(err error) { cb <- err })
	if nerr := waitErr(nextDone, 5*time.Second, "the interceptor's next"); errors.Is(nerr, errHang) {
		t.Fatal(nerr)
	}
	var cbErr error
	cbRan := false
	select {
	case cbErr = <-cb:
		cbRan = true
	case <-time.After(2 * time.Second):
	}
	if err != nil && cbRan {
		t.Fatalf("AsyncInvoke returned %v (the call was not sent, no callback will run) and the callback ran anyway with %v: two outcomes for one call", err, cbErr)
	}
	if err == nil && !cbRan {
		t.Fatalf("AsyncInvoke returned nil and the callback never ran")
	}
}
