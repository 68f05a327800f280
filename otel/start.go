package tarsotel

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// maxStarts bounds a starts cache: a server sees the function names its clients send, which
// need not be few.
const maxStarts = 1024

// starts caches, per servant and function, what each span of that function starts with: its
// name "<servant>/<function>" and its start options (kind and the rpc.* attributes), so that a
// traced call allocates neither again. Reads are one atomic load and a map lookup; a new function
// copies the map. Past maxStarts functions the rest are made per call.
type starts struct {
	kind trace.SpanKind
	mu   sync.Mutex // serializes writers
	m    atomic.Pointer[map[spanKey]*spanStart]
}

type spanKey struct{ servant, function string }

// spanStart is one function's span name and start options; shared, never changed.
type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

func newStarts(kind trace.SpanKind) *starts {
	s := &starts{kind: kind}
	s.m.Store(&map[spanKey]*spanStart{})
	return s
}

// get returns the span start of servant's function.
func (s *starts) get(servant, function string) *spanStart {
	k := spanKey{servant, function}
	if st, ok := (*s.m.Load())[k]; ok {
		return st
	}
	servant, function = valid(servant), valid(function) // OTLP carries strings as UTF-8
	st := &spanStart{name: servant + "/" + function, opts: []trace.SpanStartOption{
		trace.WithSpanKind(s.kind), trace.WithAttributes(callAttrs(servant, function)...),
	}}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.m.Load()
	if have, ok := old[k]; ok {
		return have
	}
	if len(old) >= maxStarts {
		return st
	}
	m := make(map[spanKey]*spanStart, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[k] = st
	s.m.Store(&m)
	return st
}

// valid returns s with each invalid UTF-8 sequence replaced by U+FFFD: names from outside the
// program (a function a gateway relays, a servant from naming) reach span names, attributes and
// error texts, which OTLP marshals as protobuf strings; one invalid string fails the export of
// its whole batch.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// validErr is err, or when its text is not valid UTF-8 an error of its text mended (valid).
func validErr(err error) error {
	if msg := err.Error(); !utf8.ValidString(msg) {
		return errors.New(valid(msg))
	}
	return err
}

func callAttrs(servant, function string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("rpc.system", "tars"),
		attribute.String("rpc.service", servant),
		attribute.String("rpc.method", function),
	}
}
