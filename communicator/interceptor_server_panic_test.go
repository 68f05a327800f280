package communicator_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestServerInnerPanicRetSeenByOuter: a server chain of two interceptors: the outer
// a tracer or metrics hook that reads info.Ret as it ends (in a deferred call, as otel's
// ServerInterceptor does), the inner one buggy: it panics (after the handler ran, or before
// calling next). The server recovers and answers RetUnknown (-99): that is what the client and
// the server's Stats get. interceptor's doc: "an outer one sees the code the client gets, even
// when an inner one refused, replaced or swallowed the error", and server/hooks.go sees to it
// for a panicking handler and a Goexit ("the interceptors see that code"). For a panicking inner
// interceptor it does not: ChainServer's next sets info.Ret only when the inner chain returns,
// the panic skips it, and the outer one reads 0 (success) after the handler ran, or 0 (never set)
// when the panic came before next: the trace/metric says OK, the client got -99.
//
// ChainServer's next now sets -99 when the inner chain does not return; before, the outer one read 0.
func TestServerInnerPanicRetSeenByOuter(t *testing.T) {
	for _, when := range []string{"after next", "before next"} {
		t.Run(when, func(t *testing.T) {
			var outerRet atomic.Int32
			outerRet.Store(12345)
			outer := func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) (err error) {
				defer func() { outerRet.Store(info.Ret) }()
				return next(ctx, info)
			}
			inner := func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
				if when == "before next" {
					panic("a bug in an inner server interceptor")
				}
				_ = next(ctx, info)
				panic("a bug in an inner server interceptor")
			}
			g := startGreeter(t, "r", serverOpt{server: []server.Option{server.WithInterceptor(outer, inner)}})
			comm := newComm(t, nil)
			sp := proxyTo(t, comm, g)
			_, err := sayHello(testCtx(t), sp, "p", 1)
			var se *servantproxy.ServerError
			if !errors.As(err, &se) {
				t.Fatalf("set-up: call err %v, want the server's RetUnknown", err)
			}
			if got := outerRet.Load(); got != se.Code {
				t.Errorf("inner interceptor panicked %s: the outer interceptor read info.Ret = %d as it ended, the client got %d (%q): the outer one must see the code the client gets", when, got, se.Code, se.Desc)
			}
		})
	}
}
