package future

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// recovered runs f and returns what it panicked with (nil if it did not).
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestOnDoneNil: OnDone(nil) is skipped, whatever the future's state, as the library skips a nil
// CallOption, interceptor or push function. Before (found by the misuse review), the first nil
// callback of a pending future was dropped, a later one made Complete panic on whatever goroutine
// completed the future (for a tarscomm call, an async worker) after the other callbacks ran, and
// on a completed future OnDone itself panicked: each a nil pointer dereference in the package.
func TestOnDoneNil(t *testing.T) {
	// A pending future with a callback registered before the nil one.
	f := Make[int]()
	ran := 0
	f.OnDone(func(int, error) { ran++ })
	onDoneP := recovered(func() { f.OnDone(nil) })
	completeP := recovered(func() { f.Complete(1, nil) })
	if ran != 1 {
		t.Errorf("the callback registered before the nil one ran %d times, want 1", ran)
	}
	if onDoneP == nil && completeP != nil {
		t.Errorf("OnDone(nil) on a pending future was accepted, then Complete panicked: %v (the other callback ran %d time(s)); "+
			"want the nil callback skipped, or refused by OnDone with a message naming it", completeP, ran)
	}

	// A completed future.
	g := Ready(1, nil)
	if p := recovered(func() { g.OnDone(nil) }); p != nil && !mentionsNil(p) {
		t.Errorf("OnDone(nil) on a completed future panicked with %v; want it skipped (or a panic that names the nil callback)", p)
	}
}

// TestGetNilContext: Get and Join with a nil ctx of a pending future return ErrNilContext (Get of
// a completed one returns its result), as servantproxy's calls refuse a nil ctx. Before (found by
// the misuse review), they panicked with a nil pointer dereference inside the package.
func TestGetNilContext(t *testing.T) {
	var nilCtx context.Context
	f := Make[int]()
	if p := recovered(func() { _, _ = f.Get(nilCtx) }); p != nil && !mentionsNil(p) {
		t.Errorf("Get(nil ctx) of a pending future panicked with %q; want an error (or a panic) that names the nil context", fmt.Sprint(p))
	}
	if p := recovered(func() { _ = Join(nilCtx, Make[int]()) }); p != nil && !mentionsNil(p) {
		t.Errorf("Join(nil ctx, pending) panicked with %q; want an error (or a panic) that names the nil context", fmt.Sprint(p))
	}
	if _, err := f.Get(nilCtx); !errors.Is(err, ErrNilContext) {
		t.Errorf("Get(nil ctx) of a pending future: %v, want ErrNilContext", err)
	}
	if err := Join(nilCtx, Make[int]()); !errors.Is(err, ErrNilContext) {
		t.Errorf("Join(nil ctx, pending): %v, want ErrNilContext", err)
	}
}

// mentionsNil reports whether a panic value is a deliberate message about a nil argument rather
// than the runtime's nil pointer dereference.
func mentionsNil(p any) bool {
	if _, ok := p.(interface{ RuntimeError() }); ok {
		return false
	}
	return true
}
