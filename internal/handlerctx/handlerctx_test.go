package handlerctx

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// handler is a Handler for the test, as the server's: a deadline, its Done made on first ask.
type handler struct {
	context.Context
	asked atomic.Bool
}

func (h *handler) Done() <-chan struct{}     { h.asked.Store(true); return h.Context.Done() }
func (h *handler) DoneAsked() bool           { return h.asked.Load() }
func (h *handler) StopDone() <-chan struct{} { return nil }
func (h *handler) Value(k any) any {
	if k == (Key{}) {
		return h
	}
	return h.Context.Value(k)
}

type key struct{}

func TestUnwatched(t *testing.T) {
	base, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := &handler{Context: base}

	if !Unwatched(h) {
		t.Error("a handler's ctx is watched")
	}
	withValue := context.WithValue(context.WithValue(h, key{}, "v"), Key{}, "not a handler")
	if Unwatched(withValue) {
		t.Error("a ctx whose Key value is not a Handler passed as a handler's")
	}
	withValue = context.WithValue(h, key{}, "v")
	if !Unwatched(withValue) {
		t.Error("a handler's ctx with a value added is watched")
	}
	if h.DoneAsked() {
		t.Fatal("Unwatched asked for Done")
	}
	// context.WithoutCancel takes the handler's values, not its end, and a cancel made over it
	// asks only its Done: it is told apart by its deadline.
	detached, cancelDetached := context.WithCancel(context.WithoutCancel(withValue))
	defer cancelDetached()
	if Unwatched(detached) || h.DoneAsked() {
		t.Errorf("WithCancel(WithoutCancel(handler's ctx)): unwatched %v, the handler's Done asked %v; want watched, not asked",
			Unwatched(detached), h.DoneAsked())
	}
	for _, plain := range []context.Context{context.Background(), base, context.WithValue(base, key{}, "v")} {
		if Unwatched(plain) {
			t.Errorf("%v, not made from a handler's ctx, is not watched", plain)
		}
	}

	// A ctx with a cancel of its own asks its parent's Done as it is made: from then on the
	// handler's ctx and every ctx made from it are watched (but the handler's ctx itself).
	own, cancelOwn := context.WithCancel(withValue)
	defer cancelOwn()
	if !h.DoneAsked() {
		t.Fatal("context.WithCancel did not ask its parent's Done")
	}
	if Unwatched(own) || Unwatched(context.WithValue(own, key{}, "w")) {
		t.Error("a ctx with its own cancel is not watched")
	}
	if Unwatched(withValue) {
		t.Error("a value-only ctx of a handler's ctx whose Done was asked for is not watched")
	}
	if !Unwatched(h) {
		t.Error("the handler's own ctx is watched")
	}
}
