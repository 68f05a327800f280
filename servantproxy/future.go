package servantproxy

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/future"
)

// FutureInvoke is AsyncInvoke returning a future instead of taking a callback: the future
// completes with rsp (holding the reply) or the call's error, on one of the Communicator's
// async workers; no goroutine is started. A call that cannot be sent (ErrQueueFull, ErrClosed,
// an unbound proxy...) completes the future at once with its error.
func (s *ServantProxy) FutureInvoke(ctx context.Context, fn string, req, rsp proto.Message, opts ...CallOption) *future.Future[proto.Message] {
	f := NewCallFuture[proto.Message](s, ctx)
	err := s.AsyncInvoke(ctx, fn, req, rsp, func(err error) {
		if err != nil {
			f.Complete(nil, err)
			return
		}
		f.Complete(rsp, nil)
	}, opts...)
	if err != nil {
		f.Complete(nil, err)
	}
	return f
}

// FutureInvokeRaw is AsyncInvokeRaw returning a future of the reply body (the caller owns it:
// the buffer the reply was read into, handed over without a copy), completed as FutureInvoke's.
func (s *ServantProxy) FutureInvokeRaw(ctx context.Context, fn string, body []byte, opts ...CallOption) *future.Future[[]byte] {
	f := NewCallFuture[[]byte](s, ctx)
	if err := s.AsyncInvokeRaw(ctx, fn, body, func(b []byte, err error) { f.Complete(b, err) }, opts...); err != nil {
		f.Complete(nil, err)
	}
	return f
}

// NewFuture returns a pending future for a call made through s, made as FutureInvoke's is
// (future.MakeHelped with s's async pool): a Get of it in an async callback, or in an OnDone,
// never waits for itself. The Future methods of generated proxies make their futures with it;
// s may be nil (an unbound proxy: the future is then a plain one).
func NewFuture[T any](s *ServantProxy) *future.Future[T] { return future.MakeHelped[T](s.helper()) }

// NewCallFuture is NewFuture for a call made with ctx (future.MakeCall): a Get with that ctx
// returns the call's own error when ctx ends (a *CallError matching ErrTimeout, or wrapping
// ctx's cancellation), as a sync call with ctx would, rather than ctx's bare error. The Future
// methods of generated proxies make their futures with it.
func NewCallFuture[T any](s *ServantProxy, ctx context.Context) *future.Future[T] {
	return future.MakeCall[T](s.helper(), ctx)
}

// helper is what a Get of s's futures waits through: the async pool (asyncproc.Pool.Wait: a Get
// in a callback lends its worker a stand-in, which runs the callbacks waiting, the future's own
// completion among them); nil for an unbound proxy.
func (s *ServantProxy) helper() future.Helper {
	if s == nil || s.p == nil || s.p.async == nil {
		return nil
	}
	return s.p.async
}
