package tarsotel_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/internal/handlerctx"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/server"
)

// TestHandlerCtxKeptThroughTracing: the spans the tracing interceptors put in a handler's ctx
// only add values to it (internal/handlerctx), so that the calls the handler relays take its
// deadline without watching it (no timer per relayed request); a ctx the handler derives with a
// cancel of its own is watched as any other.
func TestHandlerCtxKeptThroughTracing(t *testing.T) {
	_, o, stop := setup()
	defer stop()
	backAddr := startServer(t, o, func(s *server.Server) {
		echo := func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		}
		mustHandle(t, s, backObj, "Load", echo)
		mustHandle(t, s, backObj, "LoadCancel", echo)
	})

	// The front's client: the tracing interceptor, and inside it a probe of the ctx it passes on.
	probes := make(chan bool, 4) // per call: was the ctx below the tracing unwatched?
	probe := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		probes <- handlerctx.Unwatched(ctx)
		return next(ctx, info)
	}
	relay, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)),
		communicator.WithInterceptor(tarsotel.ClientInterceptor(o), probe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", relay.Close) })
	backPrx := proxy(t, relay, backObj, backAddr)

	handlerMarked := make(chan bool, 1)
	frontAddr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, frontObj, "Get", func(ctx context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			handlerMarked <- handlerctx.Unwatched(ctx)
			a, err := backPrx.InvokeRaw(ctx, "Load", req)
			if err != nil {
				return nil, err
			}
			own, cancel := context.WithCancel(ctx)
			defer cancel()
			b, err := backPrx.InvokeRaw(own, "LoadCancel", req)
			if err != nil {
				return nil, err
			}
			return append(append(rsp, a...), b...), nil
		})
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rsp, err := proxy(t, newComm(t, o), frontObj, frontAddr).InvokeRaw(ctx, "Get", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if string(rsp) != "xx" {
		t.Fatalf("reply %q, want %q", rsp, "xx")
	}
	if !<-handlerMarked {
		t.Error("the handler's ctx under the tracing server interceptor is watched")
	}
	if !<-probes {
		t.Error("the relayed call's ctx under the tracing client interceptor is watched")
	}
	if <-probes {
		t.Error("a ctx the handler derived with its own cancel is not watched")
	}
}
