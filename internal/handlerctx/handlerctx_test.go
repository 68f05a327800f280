package handlerctx

import (
	"context"
	"testing"
	"time"
)

// handler is a Handler for the test: a ctx with a deadline, as the server's are.
type handler struct{ context.Context }

func (handler) HandlerCtx() {}

type key struct{}

func TestKeep(t *testing.T) {
	base, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := handler{base}

	got := Keep(h, context.WithValue(h, key{}, "v"))
	if _, ok := got.(Handler); !ok {
		t.Fatal("a handler's ctx with a value added is not a Handler")
	}
	if got.Value(key{}) != "v" {
		t.Errorf("the kept ctx lost its value: %v", got.Value(key{}))
	}
	want, _ := base.Deadline()
	if d, _ := got.Deadline(); !d.Equal(want) {
		t.Errorf("the kept ctx's deadline %v is not its handler's %v", d, want)
	}
	if got.Done() != base.Done() {
		t.Error("the kept ctx's Done is not its handler's")
	}
	if again := Keep(got, context.WithValue(got, key{}, "w")); again.Value(key{}) != "w" {
		t.Error("keeping a kept ctx lost the newer value")
	} else if _, ok := again.(Handler); !ok {
		t.Error("a kept ctx with another value added is not a Handler")
	}
	if Keep(h, h) != context.Context(h) {
		t.Error("Keep wrapped a ctx that is a Handler already")
	}

	plain := context.WithValue(context.Background(), key{}, "v")
	if got := Keep(context.Background(), plain); got != plain {
		t.Error("Keep changed a ctx whose parent is not a Handler")
	}
	if _, ok := Keep(context.Background(), plain).(Handler); ok {
		t.Error("a ctx whose parent is not a Handler became one")
	}
}
