package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// recovered runs f and returns what it panicked with (nil if it did not).
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestNilInterceptorInClientChainIsSkipped: WithInterceptor(tracing, metrics) where one of them is nil (an
// instrumentation turned off by configuration: var metrics interceptor.Client; if on { metrics =
// ... }). A lone nil is taken as "no interceptor" (ChainClient(nil) is nil), and a nil
// CallOption is skipped, but a nil among others is kept in the chain and called: every call of
// every proxy panics on the caller's goroutine with a nil func dereference, long after New
// accepted the option. Expected: the nil skipped (or New refusing it with an error).
//
// ChainClient now drops nils; before, every call panicked.
func TestNilInterceptorInClientChainIsSkipped(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	var ran atomic.Int32
	counting := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		ran.Add(1)
		return next(ctx, info)
	}
	var metrics interceptor.Client // turned off
	for _, order := range []struct {
		name string
		cs   []interceptor.Client
	}{
		{"counting,nil", []interceptor.Client{counting, metrics}},
		{"nil,counting", []interceptor.Client{metrics, counting}},
	} {
		t.Run(order.name, func(t *testing.T) {
			comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithInterceptor(order.cs...))
			if err != nil {
				return // refusing the nil at New is a fine answer
			}
			t.Cleanup(func() { _ = closeComm(t, comm) })
			sp := proxyTo(t, comm, g)
			ran.Store(0)
			var callErr error
			p := recovered(func() { _, callErr = sayHello(testCtx(t), sp, "n", 1) })
			if p != nil {
				t.Fatalf("WithInterceptor(%s): Invoke panicked on the caller's goroutine: %v; want the nil interceptor skipped (or New to refuse it)", order.name, p)
			}
			if callErr != nil || ran.Load() != 1 {
				t.Fatalf("WithInterceptor(%s): call err %v, the non-nil interceptor ran %d times; want nil and 1", order.name, callErr, ran.Load())
			}
		})
	}
}

// TestNilInterceptorInServerChainIsSkipped: the same on the server: server.WithInterceptor(a, nil). The
// chain calls the nil interceptor for every request, the panic is recovered per request, and
// every request is answered RetUnknown (-99) without its handler ever running: the server
// serves nothing, and only its log says why. Expected: the nil skipped (as a lone nil is), and
// the handler's reply.
//
// ChainServer now drops nils; before, every request was answered -99.
func TestNilInterceptorInServerChainIsSkipped(t *testing.T) {
	var ran, handled atomic.Int32
	counting := func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
		ran.Add(1)
		return next(ctx, info)
	}
	var metrics interceptor.Server // turned off
	g := startGreeter(t, "r", serverOpt{handled: &handled, server: []server.Option{server.WithInterceptor(counting, metrics)}})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	_, err := sayHello(testCtx(t), sp, "n", 1)
	var se *servantproxy.ServerError
	if err != nil {
		detail := ""
		if errors.As(err, &se) {
			detail = fmt.Sprintf(" (TARS code %d: %q)", se.Code, se.Desc)
		}
		t.Fatalf("server.WithInterceptor(counting, nil): call failed: %v%s, handler ran %d times; want the nil skipped and the handler's reply", err, detail, handled.Load())
	}
	if handled.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", handled.Load())
	}
}
