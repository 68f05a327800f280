package tarsotel_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const (
	frontObj = "Test.Front.FrontObj"
	backObj  = "Test.Back.BackObj"
	// failCode is what the back servant's "Fail" answers.
	failCode = -1234
)

// seen is what a server's handler saw of a request: a copy of its Current's trace fields.
type seen struct {
	messageType     int32
	context, status map[string]string
	handlerSpan     trace.SpanContext // the span in the handler's ctx
}

func record(ctx context.Context, cur *server.Current, to chan<- seen) {
	s := seen{messageType: cur.MessageType, context: maps.Clone(cur.Context), status: maps.Clone(cur.Status),
		handlerSpan: trace.SpanContextFromContext(ctx)}
	select {
	case to <- s:
	default:
	}
}

// startServer starts a project server on loopback with the tracing interceptor and the handlers
// reg registers; t.Cleanup stops it. Worker mode: the front handler blocks on its own call.
func startServer(t *testing.T, o tarsotel.Options, reg func(*server.Server)) string {
	t.Helper()
	return startServerWorkers(t, o, 4, reg)
}

// startServerWorkers is startServer with that many workers.
func startServerWorkers(t *testing.T, o tarsotel.Options, workers int, reg func(*server.Server)) string {
	t.Helper()
	s := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1), server.WithWorkers(workers), server.WithInterceptor(tarsotel.ServerInterceptor(o)))
	reg(s)
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
	return a.String()
}

// newComm starts a Communicator with the tracing client interceptor; t.Cleanup closes it.
func newComm(t *testing.T, o tarsotel.Options) *communicator.Communicator {
	t.Helper()
	c, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithInterceptor(tarsotel.ClientInterceptor(o)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", c.Close) })
	return c
}

func proxy(t testing.TB, c *communicator.Communicator, obj, addr string) *servantproxy.ServantProxy {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	var sp servantproxy.ServantProxy
	if err := c.StringToProxy(fmt.Sprintf("%s@tcp -h %s -p %s", obj, host, port), &sp); err != nil {
		t.Fatal(err)
	}
	return &sp
}

// waitSpans waits until the exporter holds n spans (a server span ends after its reply may have
// reached the client).
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans := exp.GetSpans()
		if len(spans) >= n || time.Now().After(deadline) {
			time.Sleep(20 * time.Millisecond) // a span too many would show up here
			spans = exp.GetSpans()
			if len(spans) != n {
				t.Fatalf("%d spans, want %d: %v", len(spans), n, names(spans))
			}
			return spans
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var s []string
	for _, sp := range spans {
		s = append(s, sp.SpanKind.String()+" "+sp.Name)
	}
	return s
}

// checkCarried checks what a server saw of the caller's span: a W3C traceparent naming it in the
// context map, and TARS's trace key (bit 0x100, STATUS_TRACE_KEY) naming it too.
func checkCarried(t *testing.T, who string, got seen, caller trace.SpanContext) {
	t.Helper()
	want := "00-" + caller.TraceID().String() + "-" + caller.SpanID().String() + "-01"
	if tp := got.context["traceparent"]; tp != want {
		t.Errorf("%s saw traceparent %q, want %q (context %v)", who, tp, want, got.context)
	}
	if got.messageType&tarsotel.MessageTrace == 0 {
		t.Errorf("%s saw iMessageType %#x, without the trace bit 0x100", who, got.messageType)
	}
	key := got.status[tarsotel.TraceStatusKey]
	if want := "0-" + caller.TraceID().String() + "|" + caller.SpanID().String(); key != want {
		t.Errorf("%s saw %s %q, want %q", who, tarsotel.TraceStatusKey, key, want)
	}
	if tid, sid, ok := tarsotel.ParseTraceKey(key); !ok || tid != caller.TraceID() || sid != caller.SpanID() {
		t.Errorf("%s: trace key %q does not parse to the caller's span", who, key)
	}
}

func checkAttrs(t *testing.T, s tracetest.SpanStub, want map[string]any) {
	t.Helper()
	a := attrs(s)
	for k, v := range want {
		got, ok := a[attribute.Key(k)]
		if !ok {
			t.Errorf("%s %s: no attribute %s (have %v)", s.SpanKind, s.Name, k, a)
			continue
		}
		if fmt.Sprint(got.AsInterface()) != fmt.Sprint(v) {
			t.Errorf("%s %s: %s = %v, want %v", s.SpanKind, s.Name, k, got.AsInterface(), v)
		}
	}
}

// TestChainOverTCP runs client -> front server -> (the front handler's client, with the handler's
// ctx) -> back server over loopback TCP with the project's server and real Communicators, the
// interceptors installed through communicator.WithInterceptor and server.WithInterceptor. The
// four spans are one trace, each the child of the one before, with TARS attributes; each server
// sees its caller's span in W3C trace context and in TARS's trace key. Then a call answered with
// an error code: its client and server spans have the error status and the code.
func TestChainOverTCP(t *testing.T) {
	exp, o, stop := setup()
	defer stop()

	backSeen := make(chan seen, 4)
	backAddr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, backObj, "Load", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			record(ctx, cur, backSeen)
			return append(rsp, "loaded:"...), nil
		})
		mustHandle(t, s, backObj, "Fail", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			record(ctx, cur, backSeen)
			return nil, &server.Error{Code: failCode, Desc: "failed on purpose"}
		})
	})

	// The front server's own client: a Communicator of "its process", traced too.
	backPrx := proxy(t, newComm(t, o), backObj, backAddr)
	frontSeen := make(chan seen, 4)
	frontAddr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, frontObj, "Get", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			record(ctx, cur, frontSeen)
			got, err := backPrx.InvokeRaw(ctx, "Load", req) // the handler's ctx: a child call
			if err != nil {
				return nil, err
			}
			return append(append(rsp, got...), req...), nil
		})
	})

	frontPrx := proxy(t, newComm(t, o), frontObj, frontAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rsp, err := frontPrx.InvokeRaw(ctx, "Get", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if string(rsp) != "loaded:x" {
		t.Fatalf("reply %q, want %q", rsp, "loaded:x")
	}

	spans := waitSpans(t, exp, 4)
	by := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		by[s.SpanKind.String()+" "+s.Name] = s
	}
	c1, s1 := by["client "+frontObj+"/Get"], by["server "+frontObj+"/Get"]
	c2, s2 := by["client "+backObj+"/Load"], by["server "+backObj+"/Load"]
	chain := []tracetest.SpanStub{c1, s1, c2, s2}
	for i, s := range chain {
		if !s.SpanContext.IsValid() {
			t.Fatalf("span %d of the chain missing: have %v", i, names(spans))
		}
		if s.SpanContext.TraceID() != c1.SpanContext.TraceID() {
			t.Errorf("%s %s is in trace %s, want %s", s.SpanKind, s.Name, s.SpanContext.TraceID(), c1.SpanContext.TraceID())
		}
		if s.Status.Code == codes.Error {
			t.Errorf("%s %s has status %v on a successful chain", s.SpanKind, s.Name, s.Status)
		}
	}
	if c1.Parent.IsValid() {
		t.Errorf("the first client span has parent %s, want none", c1.Parent.SpanID())
	}
	for i := 1; i < len(chain); i++ {
		if p, want := chain[i].Parent, chain[i-1].SpanContext; p.SpanID() != want.SpanID() || p.TraceID() != want.TraceID() {
			t.Errorf("%s %s: parent %s, want %s (%s %s)", chain[i].SpanKind, chain[i].Name, p.SpanID(), want.SpanID(), chain[i-1].SpanKind, chain[i-1].Name)
		}
	}
	if !s1.Parent.IsRemote() || !s2.Parent.IsRemote() || c2.Parent.IsRemote() {
		t.Errorf("remote parents: front server %v, back server %v, handler's client %v; want true, true, false",
			s1.Parent.IsRemote(), s2.Parent.IsRemote(), c2.Parent.IsRemote())
	}

	_, frontPort, _ := net.SplitHostPort(frontAddr)
	_, backPort, _ := net.SplitHostPort(backAddr)
	fp, _ := strconv.Atoi(frontPort)
	bp, _ := strconv.Atoi(backPort)
	checkAttrs(t, c1, map[string]any{"rpc.system": "tars", "rpc.service": frontObj, "rpc.method": "Get",
		"tars.endpoint": frontAddr, "server.address": "127.0.0.1", "server.port": fp, "tars.return_code": 0})
	checkAttrs(t, s1, map[string]any{"rpc.system": "tars", "rpc.service": frontObj, "rpc.method": "Get",
		"client.address": "127.0.0.1", "tars.return_code": 0})
	checkAttrs(t, c2, map[string]any{"rpc.system": "tars", "rpc.service": backObj, "rpc.method": "Load",
		"tars.endpoint": backAddr, "server.address": "127.0.0.1", "server.port": bp, "tars.return_code": 0})
	checkAttrs(t, s2, map[string]any{"rpc.system": "tars", "rpc.service": backObj, "rpc.method": "Load",
		"client.address": "127.0.0.1", "tars.return_code": 0})
	// What the servers saw: the caller's span on the wire both ways, and the server span in the
	// handler's ctx.
	fs, bs := <-frontSeen, <-backSeen
	checkCarried(t, "front server", fs, c1.SpanContext)
	checkCarried(t, "back server", bs, c2.SpanContext)
	if fs.handlerSpan.SpanID() != s1.SpanContext.SpanID() || bs.handlerSpan.SpanID() != s2.SpanContext.SpanID() {
		t.Errorf("handlers' ctx spans %s, %s, want the server spans %s, %s", fs.handlerSpan.SpanID(), bs.handlerSpan.SpanID(),
			s1.SpanContext.SpanID(), s2.SpanContext.SpanID())
	}

	// A failing call: a server error with its code on both sides.
	exp.Reset()
	_, err = backPrx.InvokeRaw(ctx, "Fail", []byte("y"))
	var se *communicator.ServerError
	if !errors.As(err, &se) || se.Code != failCode {
		t.Fatalf("Fail: %v, want a ServerError with code %d", err, failCode)
	}
	spans = waitSpans(t, exp, 2)
	fc, fsrv := spans[0], spans[1]
	if fc.SpanKind != trace.SpanKindClient {
		fc, fsrv = fsrv, fc
	}
	checkCarried(t, "back server (Fail)", <-backSeen, fc.SpanContext)
	if fsrv.Parent.SpanID() != fc.SpanContext.SpanID() || fsrv.SpanContext.TraceID() != fc.SpanContext.TraceID() {
		t.Errorf("failing call: server span's parent %s, want the client span %s", fsrv.Parent.SpanID(), fc.SpanContext.SpanID())
	}
	for _, s := range []tracetest.SpanStub{fc, fsrv} {
		if s.Status.Code != codes.Error {
			t.Errorf("failing call: %s span status %v, want Error", s.SpanKind, s.Status)
		}
		checkAttrs(t, s, map[string]any{"rpc.service": backObj, "rpc.method": "Fail", "tars.return_code": failCode})
	}
	if !strings.Contains(fc.Status.Description, strconv.Itoa(failCode)) {
		t.Errorf("failing call: client status %q does not name the code %d", fc.Status.Description, failCode)
	}
	if len(fc.Events) == 0 || fc.Events[0].Name != "exception" {
		t.Errorf("failing call: the client span recorded no error event: %+v", fc.Events)
	}
	checkAttrs(t, fc, map[string]any{"tars.endpoint": backAddr})
}

func mustHandle(t *testing.T, s *server.Server, obj, fn string, h server.HandlerFunc) {
	t.Helper()
	if err := s.Handle(obj, fn, h); err != nil {
		t.Fatal(err)
	}
}
