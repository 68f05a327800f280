package tracekey

import (
	"context"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

func TestFromRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		mt   int32
		key  string
		has  bool
		id   string
		ok   bool
	}{
		{"two parts", codec.MessageTrace, "f.2-abc|span1", true, "f.2-abc", true},
		{"three parts", codec.MessageTrace | codec.MessageDyed, "tid|span|parent", true, "tid", true},
		{"no bit", 0, "tid|span", true, "", false},
		{"no key", codec.MessageTrace, "", false, "", false},
		{"one part", codec.MessageTrace, "tid", true, "", false},
		{"four parts", codec.MessageTrace, "a|b|c|d", true, "", false},
		{"empty id", codec.MessageTrace, "|span", true, "", false},
	} {
		status := map[string]string{"other": "x"}
		if tc.has {
			status[StatusKey] = tc.key
		}
		id, ok := FromRequest(tc.mt, status)
		if id != tc.id || ok != tc.ok {
			t.Errorf("%s: FromRequest(%#x, %q) = %q, %v; want %q, %v", tc.name, tc.mt, tc.key, id, ok, tc.id, tc.ok)
		}
	}
}

// TestApplyStartsANewSpan: each call carries the trace id under a span id of its own, and the
// caller's status map is not changed.
func TestApplyStartsANewSpan(t *testing.T) {
	status := map[string]string{"a": "1"}
	mt1, s1 := Apply(codec.MessageDyed, status, "tid")
	_, s2 := Apply(0, status, "tid")
	if mt1 != codec.MessageDyed|codec.MessageTrace {
		t.Errorf("message type %#x; want the trace bit added to %#x", mt1, codec.MessageDyed)
	}
	if _, ok := status[StatusKey]; ok || len(status) != 1 {
		t.Errorf("the caller's map was changed: %v", status)
	}
	if s1["a"] != "1" {
		t.Errorf("the call's own entries were lost: %v", s1)
	}
	k1, k2 := s1[StatusKey], s2[StatusKey]
	id1, span1, _ := strings.Cut(k1, "|")
	id2, span2, _ := strings.Cut(k2, "|")
	if id1 != "tid" || id2 != "tid" || len(span1) != 16 || len(span2) != 16 || span1 == span2 {
		t.Errorf("keys %q and %q; want \"tid|<16 hex digits>\" with two different span ids", k1, k2)
	}
	if got, ok := FromRequest(mt1, s1); !ok || got != "tid" {
		t.Errorf("the key Apply wrote reads back as %q, %v; want tid", got, ok)
	}
}

func TestContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Error("a bare context carries a trace")
	}
	ctx := WithTraceID(context.Background(), "tid")
	if id, ok := FromContext(ctx); !ok || id != "tid" {
		t.Errorf("FromContext = %q, %v; want tid, true", id, ok)
	}
}
