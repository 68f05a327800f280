package tarsotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tarscomm/tarscomm/server"
)

// TestRelayAsyncKeepsChain (a guard, passed when written): a front handler relays with an async call and a future
// (its ctx), and a one-way call; every downstream span is in the caller's trace, each client
// span the child of the front's server span and each back server span the child of its client
// span.
func TestRelayAsyncKeepsChain(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	oneway := make(chan struct{}, 1)
	backAddr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, backObj, "Load", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		})
		mustHandle(t, s, backObj, "Note", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			oneway <- struct{}{}
			return rsp, nil
		})
	})
	backPrx := proxy(t, newComm(t, o), backObj, backAddr)
	frontAddr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, frontObj, "Get", func(ctx context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			done := make(chan []byte, 1)
			if err := backPrx.AsyncInvokeRaw(ctx, "Load", []byte("a"), func(b []byte, err error) { done <- b }); err != nil {
				return nil, err
			}
			f := backPrx.FutureInvokeRaw(ctx, "Load", []byte("f"))
			if err := backPrx.InvokeOnewayRaw(ctx, "Note", nil); err != nil {
				return nil, err
			}
			fb, err := f.Get(ctx)
			if err != nil {
				return nil, err
			}
			return append(append(rsp, <-done...), fb...), nil
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := proxy(t, newComm(t, o), frontObj, frontAddr).InvokeRaw(ctx, "Get", nil)
	if err != nil || string(got) != "af" {
		t.Fatalf("Get: %q %v", got, err)
	}
	<-oneway
	spans := waitSpans(t, exp, 8) // front client, front server, 3 back clients, 3 back servers
	var root, front tracetest.SpanStub
	for _, s := range spans {
		switch s.SpanKind.String() + " " + s.Name {
		case "client " + frontObj + "/Get":
			root = s
		case "server " + frontObj + "/Get":
			front = s
		}
	}
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("%s %s in trace %s, want %s", s.SpanKind, s.Name, s.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
	}
	for _, s := range spans {
		switch {
		case s.SpanKind.String() == "client" && s.Name != frontObj+"/Get":
			if s.Parent.SpanID() != front.SpanContext.SpanID() {
				t.Errorf("relayed client span %s: parent %s, want the front server span %s", s.Name, s.Parent.SpanID(), front.SpanContext.SpanID())
			}
		case s.SpanKind.String() == "server" && s.Name != frontObj+"/Get":
			if p, ok := byID[s.Parent.SpanID().String()]; !ok || p.SpanKind.String() != "client" || p.Name != s.Name {
				t.Errorf("back server span %s: parent %s is not its client span", s.Name, s.Parent.SpanID())
			}
		}
	}
}
