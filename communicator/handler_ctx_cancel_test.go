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
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// callEnd is how a downstream call made inside a relay handler ended.
type callEnd struct {
	err    error
	ctxErr error // the ctx the call was made with, right after the call returned
	at     time.Time
}

// relayTo starts a relay server (worker mode) whose SayHello is h, and returns it (the test
// stops it itself; t.Cleanup stops it again, which waits for the rest) and a proxy to it.
func relayTo(t *testing.T, comm *communicator.Communicator,
	h func(context.Context, *server.Current, *hellopb.HelloRequest) (*hellopb.HelloReply, error)) (*server.Server, *servantproxy.ServantProxy) {
	t.Helper()
	const relayObj = "Test.Relay.RelayObj"
	relay := server.New(server.WithLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Named("relay")),
		server.WithNumEventLoop(1), server.WithWorkers(4))
	if err := server.HandleProto(relay, relayObj, "SayHello", h); err != nil {
		t.Fatal(err)
	}
	addr, err := relay.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = relay.Stop(ctx)
	})
	_, port, _ := net.SplitHostPort(addr.String())
	var up servantproxy.ServantProxy
	if err := comm.StringToProxy(relayObj+"@tcp -h 127.0.0.1 -p "+port, &up); err != nil {
		t.Fatal(err)
	}
	return relay, &up
}

// expectCancelled checks that the downstream call a relay handler made ended with
// context.Canceled within 5s of what (at since), and that the client's call to the relay ended.
func expectCancelled(t *testing.T, ended <-chan callEnd, g *greeter, upDone <-chan error, since time.Time, what string) {
	t.Helper()
	var got callEnd
	select {
	case got = <-ended:
	case <-time.After(5 * time.Second):
		close(g.release) // let the downstream call finish, so nothing is left behind
		got = <-ended
		t.Errorf("%s, but the downstream call made with that ctx was still running 5s later: it returned only "+
			"when the downstream server answered (%v after), with err %v, while its ctx said %v; want the call to "+
			"end at once with context.Canceled", what, got.at.Sub(since).Round(time.Millisecond), got.err, got.ctxErr)
	}
	if got.err != nil && !errors.Is(got.err, context.Canceled) {
		t.Errorf("the downstream call ended with %v, want context.Canceled", got.err)
	}
	select {
	case <-upDone:
	case <-time.After(35 * time.Second):
		t.Error("the client's call to the relay did not end")
	}
}

// TestHandlerCtxStopCancelsDownstreamCall: server.Stop that gives up waiting cancels the
// handlers' ctx ("The handler's ctx": it ends "when Stop gives up waiting"). A handler blocked in
// a downstream tarscomm call made with that very ctx gets its call back, ended by the
// cancellation, as any Go call taking a ctx does: the sync call watches the handler's StopDone.
// Before, the call was not watched at all (internal/handlerctx assumed a handler's ctx ends only
// at its deadline or when the handler returns), and ran on until the downstream server answered
// or its deadline: the handler, and Stop, waited for it.
func TestHandlerCtxStopCancelsDownstreamCall(t *testing.T) {
	seen := make(chan *server.Current, 1)
	g := startGreeter(t, "held", serverOpt{block: true, seen: seen}) // answers when g.release closes
	comm := newComm(t, nil)
	down := proxyTo(t, comm, g)

	ended := make(chan callEnd, 1)
	relay, up := relayTo(t, comm, func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		rsp := new(hellopb.HelloReply)
		err := down.Invoke(ctx, "SayHello", req, rsp, servantproxy.WithTimeout(20*time.Second))
		ended <- callEnd{err: err, ctxErr: ctx.Err(), at: time.Now()}
		return rsp, err
	})

	upDone := make(chan error, 1)
	go func() {
		_, err := sayHello(context.Background(), up, "stop", 1, servantproxy.WithTimeout(30*time.Second))
		upDone <- err
	}()
	select {
	case <-seen: // the relay's handler is in its downstream call
	case <-time.After(10 * time.Second):
		t.Fatal("the downstream greeter saw no call")
	}

	stopCtx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	stopErr := relay.Stop(stopCtx) // gives up: cancels the handlers' ctx
	cancel()
	gaveUp := time.Now()
	if !errors.Is(stopErr, context.DeadlineExceeded) {
		t.Logf("relay.Stop returned %v (expected it to give up waiting)", stopErr)
	}

	expectCancelled(t, ended, g, upDone, gaveUp, "Stop gave up and cancelled the handler's ctx")
}

// TestHandlerCtxWithoutCancelThenCancel: the package documentation of server says "Work that
// must outlive the deadline takes context.WithoutCancel(ctx)". A handler that does so and bounds
// that work with a cancel of its own, context.WithCancel(context.WithoutCancel(ctx)), must be able
// to end a tarscomm call made with it by cancelling, and can: handlerctx tells such a ctx by its
// deadline (not the handler's). Before, the derived ctx answering Value(handlerctx.Key) with the
// handler's ctx, whose Done was never asked (WithoutCancel's Done is nil, so WithCancel does not
// ask its parent), was not watched, and the call ignored the cancel, running until the downstream
// server answered or its timeout.
func TestHandlerCtxWithoutCancelThenCancel(t *testing.T) {
	seen := make(chan *server.Current, 1)
	g := startGreeter(t, "held", serverOpt{block: true, seen: seen})
	comm := newComm(t, nil)
	down := proxyTo(t, comm, g)

	ended := make(chan callEnd, 1)
	cancelled := make(chan time.Time, 1)
	_, up := relayTo(t, comm, func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		go func() {
			select {
			case <-seen: // the call is at the greeter
			case <-time.After(10 * time.Second):
			}
			cancel()
			cancelled <- time.Now()
		}()
		rsp := new(hellopb.HelloReply)
		err := down.Invoke(bg, "SayHello", req, rsp, servantproxy.WithTimeout(20*time.Second))
		ended <- callEnd{err: err, ctxErr: bg.Err(), at: time.Now()}
		return rsp, err
	})

	upDone := make(chan error, 1)
	go func() {
		_, err := sayHello(context.Background(), up, "cancel", 1, servantproxy.WithTimeout(30*time.Second))
		upDone <- err
	}()
	var at time.Time
	select {
	case at = <-cancelled:
	case <-time.After(15 * time.Second):
		t.Fatal("the relay's handler did not cancel")
	}

	expectCancelled(t, ended, g, upDone, at, "the handler cancelled context.WithCancel(context.WithoutCancel(ctx))")
}
