package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

type icptValueKey struct{}

// TestAsyncFromHandlerHookedOutlivesHandler: internal/handlerctx's doc says "an async call
// a handler starts is not cancelled when the handler returns; it ends by its deadline". That
// holds for a call made straight with the handler's ctx, but not once the call takes the hooked
// path (a client interceptor, or a dyed ctx) with a ctx made from the handler's by adding a value:
// Before, servantproxy's asyncCtx compared inner.Done() with caller.Done(), which asked the
// handler's Done (DoneAsked became true), so handlerctx.Find no longer recognised the ctx,
// watchedAsync returned the handler's Done, and the async call was cancelled when the handler
// returned. asyncCtx now leaves a handler's ctx unasked.
func TestAsyncFromHandlerHookedOutlivesHandler(t *testing.T) {
	cases := []struct {
		name string
		opts []communicator.Option
		ctx  func(context.Context) context.Context // what the handler makes its call with
	}{
		{
			name: "interceptor adds a value",
			opts: []communicator.Option{communicator.WithInterceptor(func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
				return next(context.WithValue(ctx, icptValueKey{}, "v"), info)
			})},
			ctx: func(ctx context.Context) context.Context { return ctx },
		},
		{
			name: "dyed handler ctx, no interceptor",
			ctx:  func(ctx context.Context) context.Context { return dye.WithKey(ctx, "k") },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := make(chan *server.Current, 1)
			g := startGreeter(t, "held", serverOpt{block: true, seen: seen})
			comm := newCommWith(t, nil, tc.opts...)
			down := proxyTo(t, comm, g)

			result := make(chan error, 1)
			_, up := relayTo(t, comm, func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
				rsp := new(hellopb.HelloReply)
				err := down.AsyncInvoke(tc.ctx(ctx), "SayHello", req, rsp, func(err error) {
					if err == nil {
						_, err = checkReply(rsp, req.GetName(), req.GetSeq())
					}
					result <- err
				}, servantproxy.WithTimeout(20*time.Second))
				if err != nil {
					return nil, fmt.Errorf("AsyncInvoke: %w", err)
				}
				return &hellopb.HelloReply{Message: req.GetName() + "@relay", Seq: req.GetSeq()}, nil
			})

			// The relay's handler starts its async call and returns; the client gets its reply.
			if _, err := sayHello(testCtx(t), up, "async", 7, servantproxy.WithTimeout(20*time.Second)); err != nil {
				t.Fatalf("call to the relay: %v", err)
			}
			// The handler has returned; its ctx is cancelled. The async call must not end for that:
			// the downstream greeter holds it until release.
			select {
			case err := <-result:
				close(g.release)
				t.Fatalf("the handler's async call ended when the handler returned, before the downstream answered: "+
					"err %v (context.Canceled: %v); want it to outlive the handler and get the reply", err, errors.Is(err, context.Canceled))
			case <-time.After(time.Second):
			}
			select {
			case <-seen: // the async call is at the downstream greeter, which holds it
			case <-time.After(live):
				t.Fatal("the downstream greeter saw no call")
			}
			close(g.release)
			if err := waitErr(result, live, "the handler's async call"); err != nil {
				t.Fatalf("the handler's async call after the downstream answered: %v, want the reply", err)
			}
		})
	}
}
