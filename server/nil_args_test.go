package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// panicText runs f and returns what it panicked with, as text ("" if it did not).
func panicText(f func()) (p string) {
	defer func() {
		if r := recover(); r != nil {
			p = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestNewNilOption: New(nil) (an option chosen at run time and left unset) skips it, as
// WithInterceptor skips a nil interceptor and the client a nil CallOption. Before (found by the
// misuse review), it panicked with a nil pointer dereference.
func TestNewNilOption(t *testing.T) {
	var s *Server
	if p := panicText(func() { s = New(nil) }); p != "" {
		t.Fatalf("server.New(nil Option) panicked: %s; want the nil option skipped", p)
	}
	_ = s.Stop(context.Background())
}

// TestStopNilContext: Stop(nil) of a running server is refused with ErrNilContext before it
// changes anything. Before (found by the misuse review), it panicked with a nil pointer
// dereference after it had begun shutting the server down, leaving it half stopped.
func TestStopNilContext(t *testing.T) {
	s := New()
	mustHandle(t, s, "App.S.Obj", "echo", echo)
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = s.Stop(ctx) // what the panicking Stop left
	})
	var nilCtx context.Context
	var err error
	if p := panicText(func() { err = s.Stop(nilCtx) }); p == "" && !errors.Is(err, ErrNilContext) {
		t.Errorf("Stop(nil ctx) of a running server: %v, want ErrNilContext", err)
	}
	if p := panicText(func() { _ = s.Stop(nilCtx) }); p == "runtime error: invalid memory address or nil pointer dereference" {
		t.Errorf("Stop(nil ctx) of a running server panicked inside the package (%s), with the server half stopped; "+
			"want an error (or a panic) naming the nil ctx, before anything is stopped", p)
	}
}
