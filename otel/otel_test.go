package tarsotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tarscomm/tarscomm/interceptor"
	tarsotel "github.com/tarscomm/tarscomm/otel"
)

func setup() (*tracetest.InMemoryExporter, tarsotel.Options, func()) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	return exp, tarsotel.Options{TracerProvider: tp}, func() { _ = tp.Shutdown(context.Background()) }
}

// hop plays the communicator and the server between a client interceptor and a server one: the
// request's maps and message type go over as the wire would carry them, and the call ends with
// the handler's return code.
func hop(ctx context.Context, t *testing.T, o tarsotel.Options, servant, fn, endpoint string, handler func(ctx context.Context) int32) error {
	client := tarsotel.ClientInterceptor(o)
	server := tarsotel.ServerInterceptor(o)
	info := &interceptor.CallInfo{Servant: servant, Function: fn}
	return client(ctx, info, func(ctx context.Context, info *interceptor.CallInfo) error {
		if info.MessageType&0x100 == 0 || !strings.Contains(info.Status["STATUS_TRACE_KEY"], "|") {
			t.Errorf("no TARS trace key: type %#x status %v", info.MessageType, info.Status)
		}
		if info.Context["traceparent"] == "" {
			t.Errorf("no traceparent in the context map %v", info.Context)
		}
		sinfo := &interceptor.ServerInfo{Servant: servant, Function: fn, MessageType: info.MessageType,
			Context: info.Context, Status: info.Status, RemoteAddr: "127.0.0.1:5555"}
		_ = server(context.Background(), sinfo, func(ctx context.Context, si *interceptor.ServerInfo) error {
			si.Ret = handler(ctx)
			return nil
		})
		info.Endpoint, info.Ret = endpoint, sinfo.Ret
		var err error
		if sinfo.Ret != 0 {
			err = errors.New("server error")
		}
		info.End(err)
		return err
	})
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, a := range s.Attributes {
		m[a.Key] = a.Value
	}
	return m
}

// TestChain: client -> server -> (the handler's client, with the handler's ctx) -> server. All
// four spans are one trace, each the child of the one before.
func TestChain(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	err := hop(context.Background(), t, o, "A.Front.Obj", "Get", "127.0.0.1:1001", func(ctx context.Context) int32 {
		if err := hop(ctx, t, o, "A.Back.Obj", "Load", "127.0.0.1:1002", func(context.Context) int32 { return -3 }); err == nil {
			t.Error("the inner call did not fail")
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4", len(spans))
	}
	by := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		by[s.SpanKind.String()+" "+s.Name] = s
	}
	c1, s1 := by["client A.Front.Obj/Get"], by["server A.Front.Obj/Get"]
	c2, s2 := by["client A.Back.Obj/Load"], by["server A.Back.Obj/Load"]
	chain := []tracetest.SpanStub{c1, s1, c2, s2}
	for i, s := range chain {
		if !s.SpanContext.IsValid() {
			t.Fatalf("span %d missing: %v", i, by)
		}
		if s.SpanContext.TraceID() != c1.SpanContext.TraceID() {
			t.Errorf("span %s in another trace", s.Name)
		}
		if i > 0 && s.Parent.SpanID() != chain[i-1].SpanContext.SpanID() {
			t.Errorf("span %d (%s %s) parent %s, want %s", i, s.SpanKind, s.Name, s.Parent.SpanID(), chain[i-1].SpanContext.SpanID())
		}
	}
	a := attrs(c2)
	if a["rpc.system"].AsString() != "tars" || a["rpc.service"].AsString() != "A.Back.Obj" || a["rpc.method"].AsString() != "Load" ||
		a["tars.endpoint"].AsString() != "127.0.0.1:1002" || a["server.port"].AsInt64() != 1002 || a["tars.return_code"].AsInt64() != -3 {
		t.Errorf("inner client attributes %v", a)
	}
	if c2.Status.Code != codes.Error || s2.Status.Code != codes.Error || c1.Status.Code == codes.Error {
		t.Errorf("statuses: inner client %v server %v, outer client %v", c2.Status, s2.Status, c1.Status)
	}
	if attrs(s1)["client.address"].AsString() != "127.0.0.1" {
		t.Errorf("server attributes %v", attrs(s1))
	}
}

// TestTarsKeyOnly: a TarsCpp or TarsGo caller sends only the TARS trace key; the server span
// joins its trace.
func TestTarsKeyOnly(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	info := &interceptor.ServerInfo{Servant: "A.B.Obj", Function: "f", MessageType: 0x100,
		Status: map[string]string{"STATUS_TRACE_KEY": "f-" + tid + "|" + sid}}
	_ = tarsotel.ServerInterceptor(o)(context.Background(), info, func(ctx context.Context, _ *interceptor.ServerInfo) error {
		if got := trace.SpanContextFromContext(ctx).TraceID().String(); got != tid {
			t.Errorf("handler's trace %s", got)
		}
		return nil
	})
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].SpanContext.TraceID().String() != tid || spans[0].Parent.SpanID().String() != sid {
		t.Fatalf("spans %+v", spans)
	}
	// Without the 0x100 bit the key is not a trace (TarsCpp needs both).
	exp.Reset()
	info.MessageType = 0
	_ = tarsotel.ServerInterceptor(o)(context.Background(), info, func(context.Context, *interceptor.ServerInfo) error { return nil })
	if s := exp.GetSpans(); len(s) != 1 || s[0].SpanContext.TraceID().String() == tid {
		t.Errorf("joined a trace without the bit: %+v", s)
	}
}

func TestTraceKey(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
	k := tarsotel.TraceKey(sc)
	if k != "0-4bf92f3577b34da6a3ce929d0e0e4736|00f067aa0ba902b7" {
		t.Fatalf("key %q", k)
	}
	gt, gs, ok := tarsotel.ParseTraceKey(k)
	if !ok || gt != tid || gs != sid {
		t.Fatalf("parse %v %v %v", gt, gs, ok)
	}
	// A TarsCpp uuid that is not 32 hex digits still gives a stable, valid trace.
	a1, b1, ok1 := tarsotel.ParseTraceKey("f-not-hex-uuid|span-7|parent")
	a2, b2, _ := tarsotel.ParseTraceKey("f-not-hex-uuid|span-7|parent")
	if !ok1 || a1 != a2 || b1 != b2 {
		t.Error("hashed ids are not stable")
	}
	for _, bad := range []string{"", "onlyone", "a|", "|b", "a|b|c|d"} {
		if _, _, ok := tarsotel.ParseTraceKey(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
