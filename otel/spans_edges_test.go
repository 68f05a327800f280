package tarsotel_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/server"
)

// spansWithin returns the spans exported once there are at least n, or what there is after 3s.
func spansWithin(exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	deadline := time.Now().Add(3 * time.Second)
	for {
		s := exp.GetSpans()
		if len(s) >= n || time.Now().After(deadline) {
			return s
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func kindOnly(spans tracetest.SpanStubs, k trace.SpanKind) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range spans {
		if s.SpanKind == k {
			out = append(out, s)
		}
	}
	return out
}

// TestClientSpanEndedWhenInnerInterceptorRefuses: a Client may refuse a call by returning its
// own error without calling next. The tracing interceptor outside it sees the call end: its span
// is ended and exported, sync or async (End never ran: a span leaked on every refused call).
func TestClientSpanEndedWhenInnerInterceptorRefuses(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	addr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, backObj, "Load", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		})
	})
	refused := errors.New("refused by policy")
	refuse := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		return refused
	}
	comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)),
		communicator.WithInterceptor(tarsotel.ClientInterceptor(o), refuse))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	prx := proxy(t, comm, backObj, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, err := prx.InvokeRaw(ctx, "Load", []byte("x")); !errors.Is(err, refused) {
		t.Fatalf("sync call: %v, want the refusal", err)
	}
	if err := prx.AsyncInvokeRaw(ctx, "Load", []byte("x"), func([]byte, error) {}); !errors.Is(err, refused) {
		t.Fatalf("async call: %v, want the refusal", err)
	}
	spans := kindOnly(spansWithin(exp, 2), trace.SpanKindClient)
	if len(spans) != 2 {
		t.Fatalf("%d client spans ended for 2 refused calls (sync, async), want 2", len(spans))
	}
	for _, s := range spans {
		if s.Status.Code != codes.Error {
			t.Errorf("refused call's span status %v, want Error", s.Status)
		}
	}
}

// TestServerSpanOnHandlerPanic: a handler that panics is answered -99 (RetUnknown), and the
// tracing server span ends with that code and an error status (the panic was recovered outside
// the interceptors: the span ended while it unwound, status Unset, no tars.return_code).
func TestServerSpanOnHandlerPanic(t *testing.T) {
	checkServerSpan99(t, "a panicking handler", func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
		panic("boom")
	})
}

// TestServerSpanOnHandlerGoexit: a handler that ends its goroutine (runtime.Goexit, as
// t.FailNow does) is answered -99 (RetUnknown), and the tracing server span says so: status
// Error, tars.return_code -99. The span used to end while the goroutine unwound, before anything
// set its status (Unset, no return code), and the server's hook set info.Ret to 0 for a handler
// that never returned.
func TestServerSpanOnHandlerGoexit(t *testing.T) {
	checkServerSpan99(t, "a handler that called runtime.Goexit", func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
		runtime.Goexit()
		return nil, nil
	})
}

// checkServerSpan99 calls the handler h, which fails (what it does is what), and checks that the
// call is answered -99 and its server span ends with status Error and tars.return_code -99.
func checkServerSpan99(t *testing.T, what string, h server.HandlerFunc) {
	t.Helper()
	exp, o, stop := setup()
	defer stop()
	addr := startServer(t, o, func(s *server.Server) { mustHandle(t, s, backObj, "Fail", h) })
	prx := proxy(t, newComm(t, o), backObj, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := prx.InvokeRaw(ctx, "Fail", []byte("x"))
	var se *communicator.ServerError
	if !errors.As(err, &se) || se.Code != -99 {
		t.Fatalf("call: %v, want a ServerError -99", err)
	}
	srv := kindOnly(spansWithin(exp, 2), trace.SpanKindServer)
	if len(srv) != 1 {
		t.Fatalf("%d server spans, want 1", len(srv))
	}
	s := srv[0]
	if s.Status.Code != codes.Error {
		t.Errorf("server span of %s (answered -99): status %v, want Error", what, s.Status)
	}
	if v, ok := attrs(s)["tars.return_code"]; !ok || v.AsInt64() != -99 {
		t.Errorf("server span tars.return_code %v (present %v), want -99", v.AsInterface(), ok)
	}
}

// TestServerSpanReturnCodeWhenInnerInterceptorRefuses: an inner server interceptor refuses a
// request with &server.Error{Code: -7}; the client is answered -7 and the tracing span says -7
// (info.Ret was set only by the innermost next, the handler: the span said 0).
func TestServerSpanReturnCodeWhenInnerInterceptorRefuses(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	refuse := func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
		return &server.Error{Code: -7, Desc: "not allowed"}
	}
	s := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1),
		server.WithInterceptor(tarsotel.ServerInterceptor(o), refuse))
	mustHandle(t, s, backObj, "Load", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	})
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	prx := proxy(t, newComm(t, o), backObj, a.String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = prx.InvokeRaw(ctx, "Load", []byte("x"))
	var se *communicator.ServerError
	if !errors.As(err, &se) || se.Code != -7 {
		t.Fatalf("call: %v, want a ServerError -7", err)
	}
	srv := kindOnly(spansWithin(exp, 2), trace.SpanKindServer)
	if len(srv) != 1 {
		t.Fatalf("%d server spans, want 1", len(srv))
	}
	if v := attrs(srv[0])["tars.return_code"]; v.AsInt64() != -7 {
		t.Errorf("server span tars.return_code %v, want -7 (what the client was answered); status %q", v.AsInterface(), srv[0].Status.Description)
	}
}
