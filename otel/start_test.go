package tarsotel

import (
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestStartsBounded: the cache of span starts answers every function with its own name and kind,
// and holds at most maxStarts of them however many names a server is sent.
func TestStartsBounded(t *testing.T) {
	s := newStarts(trace.SpanKindServer)
	for i := range maxStarts + 50 {
		fn := "f" + strconv.Itoa(i)
		st := s.get("A.B.Obj", fn)
		if st.name != "A.B.Obj/"+fn {
			t.Fatalf("function %s: span name %q", fn, st.name)
		}
		if cfg := trace.NewSpanStartConfig(st.opts...); cfg.SpanKind() != trace.SpanKindServer || len(cfg.Attributes()) != 3 {
			t.Fatalf("function %s: kind %v, %d attributes", fn, cfg.SpanKind(), len(cfg.Attributes()))
		}
	}
	if n := len(*s.m.Load()); n != maxStarts {
		t.Errorf("the cache holds %d functions, want %d", n, maxStarts)
	}
	if a, b := s.get("A.B.Obj", "f1"), s.get("A.B.Obj", "f1"); a != b {
		t.Error("a cached function's start was made again")
	}
	if got := s.get("A.B.Obj", "f"+strconv.Itoa(maxStarts+10)).name; got != "A.B.Obj/f"+strconv.Itoa(maxStarts+10) {
		t.Errorf("a function past the bound: name %q", got)
	}
}
