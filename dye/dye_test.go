package dye_test

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/dye"
)

func TestRoundTrip(t *testing.T) {
	if _, ok := dye.FromContext(context.Background()); ok {
		t.Fatal("a plain context is dyed")
	}
	ctx := dye.WithKey(context.Background(), "user-42")
	key, ok := dye.FromContext(ctx)
	if !ok || key != "user-42" {
		t.Fatalf("FromContext: %q %v", key, ok)
	}
	caller := map[string]string{"a": "b"}
	mt, st := dye.Apply(0x80, caller, key)
	if mt != 0x84 || st[dye.StatusKey] != "user-42" || st["a"] != "b" || len(caller) != 1 {
		t.Fatalf("Apply: %#x %v (caller's map %v)", mt, st, caller)
	}
	if k, ok := dye.FromRequest(mt, st); !ok || k != "user-42" {
		t.Fatalf("FromRequest: %q %v", k, ok)
	}
	if _, ok := dye.FromRequest(0x80, st); ok {
		t.Error("a key without the 0x04 bit is dyed (TarsCpp needs the bit)")
	}
	if dye.MessageType != 0x04 || dye.StatusKey != "STATUS_DYED_KEY" {
		t.Error("wire constants")
	}
}
