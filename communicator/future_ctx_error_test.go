package communicator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/server"
)

// slowServer starts the project's server whose SayHello waits until the test ends (worker mode,
// so that the loop keeps serving); Cleanup releases the handlers and stops it.
func slowServer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	s := server.New(server.WithNumEventLoop(1), server.WithWorkers(8))
	if err := server.HandleProto(s, servant, "SayHello", func(context.Context, *server.Current, *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		<-release
		return &hellopb.HelloReply{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(release)
		_ = stopServer(t, "slow server", s)
	})
	return a.String()
}

// TestFutureGetSameCtxClassifies: a call made with a ctx whose deadline passes (or
// which is cancelled) while the server still works. The sync call ends with a *CallError naming
// servant, function and endpoint that matches ErrTimeout (README: "errors.Is(err,
// communicator.ErrTimeout) (also context.DeadlineExceeded)"), or context.Canceled. The future
// styles, waited for as the project's own examples do (prx.FutureGreet(ctx, req).Get(ctx):
// examples/greeter, README), must classify the same failure the same way; the call's own
// result, which the future gets a moment later, is that very *CallError.
// Before, Get returned ctx's bare error (context.DeadlineExceeded, "context canceled"), and the
// call's own result, arriving a moment later, was never read.
func TestFutureGetSameCtxClassifies(t *testing.T) {
	addr := slowServer(t)
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	prx := hellopb.NewGreeterProxy(sp)
	base := testCtx(t)
	req := &hellopb.HelloRequest{Name: "x"}

	styles := map[string]func(ctx context.Context) error{
		"sync": func(ctx context.Context) error { return sp.Invoke(ctx, "SayHello", req, new(hellopb.HelloReply)) },
		"FutureInvoke(ctx).Get(ctx)": func(ctx context.Context) error {
			_, err := sp.FutureInvoke(ctx, "SayHello", req, new(hellopb.HelloReply)).Get(ctx)
			return err
		},
		"hellopb FutureSayHello(ctx).Get(ctx)": func(ctx context.Context) error {
			_, err := prx.FutureSayHello(ctx, req).Get(ctx)
			return err
		},
	}
	for _, end := range []string{"deadline", "cancel"} {
		for _, name := range []string{"sync", "FutureInvoke(ctx).Get(ctx)", "hellopb FutureSayHello(ctx).Get(ctx)"} {
			var ctx context.Context
			var cancel context.CancelFunc
			if end == "deadline" {
				ctx, cancel = context.WithTimeout(base, 150*time.Millisecond)
			} else {
				ctx, cancel = context.WithCancel(base)
				time.AfterFunc(150*time.Millisecond, cancel)
			}
			err := styles[name](ctx)
			cancel()
			var ce *communicator.CallError
			switch {
			case end == "deadline" && !errors.Is(err, communicator.ErrTimeout):
				t.Errorf("%s, ctx deadline passed: %v (%T), want it to match communicator.ErrTimeout", name, err, err)
			case end == "cancel" && !errors.Is(err, context.Canceled):
				t.Errorf("%s, ctx cancelled: %v (%T), want it to match context.Canceled", name, err, err)
			case !errors.As(err, &ce):
				t.Errorf("%s, ctx %s: %q (%T) is no *communicator.CallError naming the servant, function and endpoint", name, end, err, err)
			case ce.Servant != servant || ce.Func != "SayHello" || ce.Endpoint != addr:
				t.Errorf("%s, ctx %s: CallError{%q, %q, %q}", name, end, ce.Servant, ce.Func, ce.Endpoint)
			}
		}
	}
}
