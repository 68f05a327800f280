package tarsotel_test

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"go.opentelemetry.io/otel/trace"

	"github.com/tarscomm/tarscomm/server"
)

// TestNonUTF8FunctionSpanExportable: a gateway relays the function names its own callers
// choose; one that is not valid UTF-8 reaches the client span's name, its rpc.method and the
// error's text (status and exception event). OTLP carries them as protobuf strings, which must
// be valid UTF-8: each is mended (U+FFFD for the bad bytes), so the span and its batch export.
//
// Before, they went as is: the exporter's marshalling failed, losing the whole batch.
func TestNonUTF8FunctionSpanExportable(t *testing.T) {
	exp, o, done := setup()
	defer done()
	addr := startServer(t, o, func(s *server.Server) {
		mustHandle(t, s, backObj, "Echo", func(_ context.Context, _ *server.Current, req, _ []byte) ([]byte, error) {
			return req, nil
		})
	})
	comm := newComm(t, o)
	sp := proxy(t, comm, backObj, addr)

	fn := "Echo\xff\xfe" // as a caller of the gateway sent it
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := sp.InvokeRaw(ctx, fn, []byte("x")) // the server answers -3, no such function
	if err == nil {
		t.Fatal("a call of an unregistered function succeeded")
	}

	var client []string
	deadline := time.Now().Add(5 * time.Second)
	for len(client) == 0 && time.Now().Before(deadline) {
		for _, s := range exp.GetSpans() {
			if s.SpanKind == trace.SpanKindClient {
				client = append(client, s.Name)
				if d := s.Status.Description; !utf8.ValidString(d) {
					t.Errorf("client span status description %q is not valid UTF-8", d)
				}
				for _, ev := range s.Events {
					for _, a := range ev.Attributes {
						if a.Value.Type().String() == "STRING" && !utf8.ValidString(a.Value.AsString()) {
							t.Errorf("client span event %s attribute %s = %q is not valid UTF-8", ev.Name, a.Key, a.Value.AsString())
						}
					}
				}
				for _, a := range s.Attributes {
					if a.Value.Type().String() == "STRING" && !utf8.ValidString(a.Value.AsString()) {
						_, merr := proto.Marshal(wrapperspb.String(a.Value.AsString()))
						t.Errorf("client span attribute %s = %q is not valid UTF-8 (as an OTLP string: %v)", a.Key, a.Value.AsString(), merr)
					}
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(client) != 1 {
		t.Fatalf("client spans: %q, want one", client)
	}
	if name := client[0]; !utf8.ValidString(name) {
		_, merr := proto.Marshal(wrapperspb.String(name))
		t.Errorf("client span name %q is not valid UTF-8: OTLP cannot carry it (protobuf: %v)", name, merr)
	}
}
