package tarsotel_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/server"
)

// TestServerSpanOnHandlerGoexit: a handler that ends its goroutine (runtime.Goexit, as
// t.FailNow does) is answered -99 (RetUnknown), and the tracing server span says so: status
// Error, tars.return_code -99. The span used to end while the goroutine unwound, before anything
// set its status (Unset, no return code), and the server's hook set info.Ret to 0 for a handler
// that never returned.
func TestServerSpanOnHandlerGoexit(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	addr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, backObj, "Exit", func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
			runtime.Goexit()
			return nil, nil
		})
	})
	prx := proxy(t, newComm(t, o), backObj, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := prx.InvokeRaw(ctx, "Exit", []byte("x"))
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
		t.Errorf("server span of a handler that called runtime.Goexit (answered -99): status %v, want Error", s.Status)
	}
	if v, ok := attrs(s)["tars.return_code"]; !ok || v.AsInt64() != -99 {
		t.Errorf("server span tars.return_code %v (present %v), want -99", v.AsInterface(), ok)
	}
}
