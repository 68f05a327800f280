package communicator_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestDeadlineCarriesDownTheChain: a client calls a relay server with a 2 s timeout; the
// relay's handler calls the greeter through a proxy whose own timeout is a minute. Called with
// the handler's ctx, the greeter's request carries what is left of the 2 s (TarsGo's timeout
// delivery); called with context.WithoutCancel(ctx), the relay's minute. Sync and async.
func TestDeadlineCarriesDownTheChain(t *testing.T) {
	seen := make(chan *server.Current, 8)
	g := startGreeter(t, "end", serverOpt{seen: seen})
	comm := newComm(t, func(c *conf.Config) {
		c.SyncInvokeTimeout = time.Minute
		c.AsyncInvokeTimeout = time.Minute
	})
	down := proxyTo(t, comm, g)

	up := startRelayServer(t, comm, 4, func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		callCtx := ctx
		if req.GetSeq()%2 == 0 {
			callCtx = context.WithoutCancel(ctx) // no deadline: the proxy's own minute
		}
		rsp := new(hellopb.HelloReply)
		if req.GetName() == "async" {
			done := make(chan error, 1)
			if err := down.AsyncInvoke(callCtx, "SayHello", req, rsp, func(err error) { done <- err }); err != nil {
				return nil, err
			}
			if err := <-done; err != nil {
				return nil, err
			}
			return rsp, nil
		}
		return rsp, down.Invoke(callCtx, "SayHello", req, rsp)
	})

	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		seq  uint64
		lo   int32 // the greeter's Current.Timeout, ms, within [lo, hi]
		hi   int32
	}{
		{"sync", 1, 1, 2000},
		{"sync", 2, 2001, 60000},
		{"async", 3, 1, 2000},
		{"async", 4, 2001, 60000},
	} {
		if _, err := sayHello(ctx, up, tc.name, tc.seq, servantproxy.WithTimeout(2*time.Second)); err != nil {
			t.Fatalf("%s call %d through the relay: %v", tc.name, tc.seq, err)
		}
		select {
		case cur := <-seen:
			if cur.Timeout < tc.lo || cur.Timeout > tc.hi {
				t.Errorf("%s call %d: the greeter's request carries a %d ms timeout, want within [%d, %d]",
					tc.name, tc.seq, cur.Timeout, tc.lo, tc.hi)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s call %d: the greeter saw no request", tc.name, tc.seq)
		}
	}
}

// TestHandlerAsyncCallOutlivesHandler: an async call a handler starts with its ctx is not
// cancelled when the handler returns (the ctx ends then, but a call made with a handler's ctx
// takes its deadline and does not watch it: internal/handlerctx). The relay starts the call to a
// greeter that holds it, and answers; only then does the test let the greeter answer, and the
// call's callback gets the reply.
func TestHandlerAsyncCallOutlivesHandler(t *testing.T) {
	seen := make(chan *server.Current, 1)
	g := startGreeter(t, "held", serverOpt{block: true, seen: seen})
	comm := newComm(t, nil)
	down := proxyTo(t, comm, g)
	type outcome struct {
		rsp *hellopb.HelloReply
		err error
	}
	done := make(chan outcome, 1)
	up := startRelayServer(t, comm, 4, func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		rsp := new(hellopb.HelloReply)
		if err := down.AsyncInvoke(ctx, "SayHello", req, rsp, func(err error) { done <- outcome{rsp, err} }); err != nil {
			return nil, err
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@relay", Seq: req.GetSeq()}, nil
	})
	ctx := testCtx(t)
	if from, err := sayHello(ctx, up, "fire", 7, servantproxy.WithTimeout(20*time.Second)); err != nil || from != "relay" {
		t.Fatalf("the relay's answer: from %q, err %v", from, err)
	}
	select { // the relay's handler has returned, its async call is at the greeter
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the greeter saw no call")
	}
	close(g.release)
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("the async call a handler started ended with %v after the handler returned, want the reply", o.err)
		}
		if _, err := checkReply(o.rsp, "fire", 7); err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the async call's callback did not run")
	}
}

// startRelayServer starts a project server whose Test.Relay.RelayObj.SayHello is h (on workers
// goroutines, so h may block) and returns a proxy to it made by comm; t.Cleanup stops the server.
func startRelayServer(t testing.TB, comm *communicator.Communicator, workers int, h func(context.Context, *server.Current, *hellopb.HelloRequest) (*hellopb.HelloReply, error)) *servantproxy.ServantProxy {
	t.Helper()
	const relayObj = "Test.Relay.RelayObj"
	relay := server.New(server.WithLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Named("relay")), server.WithNumEventLoop(1), server.WithWorkers(workers))
	if err := server.HandleProto(relay, relayObj, "SayHello", h); err != nil {
		t.Fatal(err)
	}
	addr, err := relay.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopServer(t, "relay", relay); err != nil {
			t.Errorf("stop relay: %v", err)
		}
	})
	_, port, _ := net.SplitHostPort(addr.String())
	var up servantproxy.ServantProxy
	if err := comm.StringToProxy(relayObj+"@tcp -h 127.0.0.1 -p "+port, &up); err != nil {
		t.Fatal(err)
	}
	return &up
}

// TestHandlerHonoringCtxTimesOutAsTheClient: a handler that waits on its ctx and returns its
// error answers once the server's deadline for the request has passed. The client's call ends
// first, with ErrTimeout, never with the server's error for the same deadline: the request
// carries the time left rounded up to whole milliseconds, so the server's deadline is never
// before the client's. Timeouts a fraction of a millisecond past a whole one are those that
// rounding down would have given the server early.
func TestHandlerHonoringCtxTimesOutAsTheClient(t *testing.T) {
	comm := newComm(t, nil)
	up := startRelayServer(t, comm, 4, func(ctx context.Context, _ *server.Current, _ *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx := testCtx(t)
	for i := range 20 {
		timeout := 20*time.Millisecond + time.Duration(100+40*i)*time.Microsecond // 20.10 to 20.86 ms
		_, err := sayHello(ctx, up, "wait", uint64(i), servantproxy.WithTimeout(timeout))
		var se *servantproxy.ServerError
		if errors.As(err, &se) || !errors.Is(err, servantproxy.ErrTimeout) {
			t.Fatalf("call %d with a %v timeout ended with %v, want ErrTimeout", i, timeout, err)
		}
	}
}
