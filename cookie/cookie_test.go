package cookie_test

import (
	"context"
	"maps"
	"testing"

	"github.com/tarscomm/tarscomm/cookie"
)

// TestFromRequestAsTarsCpp: the framework's keys ("STATUS_" and more, in any case) are not
// cookies; every other entry is, "STATUS_" alone included (TarsCpp compares the prefix only for
// longer keys).
func TestFromRequestAsTarsCpp(t *testing.T) {
	got := cookie.FromRequest(map[string]string{
		"STATUS_DYED_KEY": "d", "status_trace_key": "t", "Status_SetName_Value": "s",
		"uid": "42", "STATUS_": "bare", "X-STATUS_A": "x",
	})
	want := map[string]string{"uid": "42", "STATUS_": "bare", "X-STATUS_A": "x"}
	if !maps.Equal(got, want) {
		t.Fatalf("cookies %v, want %v", got, want)
	}
	if c := cookie.FromRequest(map[string]string{"STATUS_DYED_KEY": "d"}); c != nil {
		t.Fatalf("a status with framework keys only: cookies %v, want nil", c)
	}
}

// TestApplyKeepsTheCallsOwn: cookies are added under the call's own entries, and the call's map
// is not changed.
func TestApplyKeepsTheCallsOwn(t *testing.T) {
	own := map[string]string{"uid": "mine", "k": "v"}
	got := cookie.Apply(own, map[string]string{"uid": "42", "tenant": "a"})
	if want := map[string]string{"uid": "mine", "k": "v", "tenant": "a"}; !maps.Equal(got, want) {
		t.Fatalf("status %v, want %v", got, want)
	}
	if len(own) != 2 || own["uid"] != "mine" {
		t.Fatalf("the call's own map changed: %v", own)
	}
	if got := cookie.Apply(own, nil); !maps.Equal(got, own) {
		t.Fatalf("no cookies: %v, want the call's map", got)
	}
	ctx := cookie.WithCookies(context.Background(), map[string]string{"a": "1"})
	if c := cookie.FromContext(ctx); c["a"] != "1" || cookie.FromContext(context.Background()) != nil {
		t.Fatal("FromContext does not return what WithCookies put")
	}
}
