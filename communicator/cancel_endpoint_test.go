package communicator_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/server"
)

// endRecorder is a client interceptor that records the CallInfo every call ends with.
type endRecorder struct {
	mu    sync.Mutex
	ended []interceptor.CallInfo
	ch    chan struct{}
}

func newEndRecorder() *endRecorder { return &endRecorder{ch: make(chan struct{}, 64)} }

func (r *endRecorder) icpt(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
	info.OnEnd(func(i *interceptor.CallInfo) {
		r.mu.Lock()
		r.ended = append(r.ended, *i)
		r.mu.Unlock()
		r.ch <- struct{}{}
	})
	return next(ctx, info)
}

// wait returns the CallInfo of the n-th call to end (from 1), failing t after 5s.
func (r *endRecorder) wait(t *testing.T, n int) interceptor.CallInfo {
	t.Helper()
	tm := time.NewTimer(5 * time.Second)
	defer tm.Stop()
	for {
		r.mu.Lock()
		if len(r.ended) >= n {
			i := r.ended[n-1]
			r.mu.Unlock()
			return i
		}
		r.mu.Unlock()
		select {
		case <-r.ch:
		case <-tm.C:
			t.Fatalf("the interceptor's End did not run for call %d within 5s", n)
		}
	}
}

// TestCancelledSyncEndpoint: a sync call is sent, the server has it (its handler runs), and then
// the caller cancels its ctx. The client interceptor's End sees the call's error
// (context.Canceled) and the endpoint it was sent to, as CallInfo's doc promises. Before, it saw
// Endpoint "" (the caller could not read where the loop had sent the call: call.Call.SentTo).
func TestCancelledSyncEndpoint(t *testing.T) {
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "a", serverOpt{block: true, seen: seen})
	rec := newEndRecorder()
	comm := newCommWith(t, nil, communicator.WithInterceptor(rec.icpt))
	sp := proxyTo(t, comm, g)

	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		errc <- sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "c", Seq: 1}, new(hellopb.HelloReply))
	}()
	select {
	case <-seen: // the request reached the server: it was sent to g
	case <-time.After(5 * time.Second):
		cancel()
		<-errc
		t.Fatal("the server did not get the request within 5s")
	}
	cancel()
	if err := waitErr(errc, 5*time.Second, "cancelled sync call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sync call: err = %v, want context.Canceled", err)
	}
	info := rec.wait(t, 1)
	if !errors.Is(info.Err, context.Canceled) {
		t.Errorf("End saw err %v, want context.Canceled", info.Err)
	}
	if info.Endpoint != g.addr {
		t.Errorf("cancelled sync call (sent to %s): End saw Endpoint %q, want %q", g.addr, info.Endpoint, g.addr)
	}
}

// TestCancelledAsyncEndpoint: the async twin of TestCancelledSyncEndpoint. An async call is sent,
// the server's handler has it, the caller cancels ctx: the callback gets context.Canceled, and
// the interceptor's End (run on the async worker before the callback) sees the greeter's
// endpoint. Before, it saw Endpoint "".
func TestCancelledAsyncEndpoint(t *testing.T) {
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "a", serverOpt{block: true, seen: seen})
	rec := newEndRecorder()
	comm := newCommWith(t, nil, communicator.WithInterceptor(rec.icpt))
	sp := proxyTo(t, comm, g)

	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	done, err := asyncHello(t, ctx, sp, "c", 1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not get the request within 5s")
	}
	cancel()
	if err := waitErr(done, 5*time.Second, "cancelled async call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled async call: err = %v, want context.Canceled", err)
	}
	info := rec.wait(t, 1)
	if info.Endpoint != g.addr {
		t.Errorf("cancelled async call (sent to %s): End saw Endpoint %q, want %q", g.addr, info.Endpoint, g.addr)
	}
}

// TestCancelledErrorNamesEndpoint: CallError's doc says the error of a call that got no reply
// names "the endpoint (when one was chosen)", as timeouts and connection errors do
// (errors_where_test.go): a call cancelled by its ctx after it was sent to the greeter names it
// too, sync and async alike. Before, CallError.Endpoint was "".
func TestCancelledErrorNamesEndpoint(t *testing.T) {
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "a", serverOpt{block: true, seen: seen})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)

	sctx, scancel := context.WithCancel(testCtx(t))
	defer scancel()
	syncErr := make(chan error, 1)
	go func() {
		syncErr <- sp.Invoke(sctx, "SayHello", &hellopb.HelloRequest{Name: "s", Seq: 1}, new(hellopb.HelloReply))
	}()
	actx, acancel := context.WithCancel(testCtx(t))
	defer acancel()
	done, err := asyncHello(t, actx, sp, "a", 2)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-seen:
		case <-time.After(5 * time.Second):
			scancel()
			<-syncErr
			t.Fatal("the server did not get both requests within 5s")
		}
	}
	scancel()
	acancel()
	for _, c := range []struct {
		what string
		err  error
	}{
		{"cancelled sync call", waitErr(syncErr, 5*time.Second, "cancelled sync call")},
		{"cancelled async call", waitErr(done, 5*time.Second, "cancelled async call")},
	} {
		var ce *communicator.CallError
		if !errors.Is(c.err, context.Canceled) || !errors.As(c.err, &ce) {
			t.Errorf("%s: err = %v, want a CallError matching context.Canceled", c.what, c.err)
			continue
		}
		if ce.Endpoint != g.addr {
			t.Errorf("%s (sent to %s): error %q has Endpoint %q, want %q", c.what, g.addr, c.err, ce.Endpoint, g.addr)
		}
	}
}
