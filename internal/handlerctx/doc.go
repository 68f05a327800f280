// Package handlerctx lets a server handler's ctx, and the ctxs made from it by adding values,
// tell the client's calls made with them that they need not watch them.
//
// A server handler's ctx (package server) carries its client's deadline, and ends at it or when
// the handler returns. A tarscomm call made with that ctx takes the deadline as its own
// (servantproxy: the earlier of its timeout and ctx's deadline, sent as iTimeout). Watching the
// ctx besides, as a call watches any ctx that can end, would make the ctx's timer
// (context.WithDeadline: ~750 ns and 5 allocations) on every request a handler relays, for an
// end the call's own deadline already keeps. So a call does not watch a ctx that is Unwatched:
// a sync call cannot outlive its handler anyway, and watches only the handler's StopDone (the
// server's Stop giving up cancels every handler's ctx, which must end the calls they wait on);
// an async call a handler starts is not cancelled when the handler returns; it ends by its
// deadline.
//
// The same holds for a ctx made from the handler's by adding values only (a tracing span, a
// request id, a logger): it ends when the handler's ends. A ctx that can end on its own
// (context.WithCancel, WithDeadline, WithTimeout, AfterFunc) asks its parent's Done as it is
// made; a handler's ctx whose Done was asked for is therefore watched, with all the ctxs made
// from it. A ctx that takes its values from a handler's ctx but not its end, as
// context.WithoutCancel does (and then WithCancel over it, which asks only that ctx's Done), is
// told apart by its deadline: it has not the handler's. Two cannot be told apart so, and a sync
// call made with them ends by its deadline (or Stop giving up) rather than by their cancel: one
// made from a handler's ctx without a deadline (a request without a timeout), and one given the
// handler's very deadline again (context.WithDeadline(context.WithoutCancel(ctx), its deadline)).
// Telling them apart would need the handler's Done, whose timer is what this package avoids.
package handlerctx

import "context"

// Key is the key under which a handler's ctx, and every ctx made from it, answers Value with the
// handler's ctx, a Handler.
type Key struct{}

// Handler is implemented by the ctx package server hands its handlers.
type Handler interface {
	context.Context
	// DoneAsked reports whether the ctx's Done has been asked for: a ctx that can end on its
	// own may have been made from it.
	DoneAsked() bool
	// StopDone is closed when the server's Stop gives up waiting for its handlers and cancels
	// their ctxs; asking for it makes no timer.
	StopDone() <-chan struct{}
}

// Unwatched reports whether ctx ends when a server handler's ctx ends, and for no other reason
// the calls made with it do not already keep (Find).
func Unwatched(ctx context.Context) bool {
	_, ok := Find(ctx)
	return ok
}

// Find returns the handler's ctx that ctx ends with, when ctx ends when it does and for no other
// reason the calls made with it do not already keep: ctx is a handler's ctx, or was made from one
// whose Done was never asked for, by adding values only (its deadline is the handler's).
func Find(ctx context.Context) (Handler, bool) {
	if h, ok := ctx.(Handler); ok {
		return h, true
	}
	h, ok := ctx.Value(Key{}).(Handler)
	if !ok || h.DoneAsked() {
		return nil, false
	}
	d, has := ctx.Deadline()
	hd, hhas := h.Deadline()
	if has != hhas || !d.Equal(hd) {
		return nil, false // values taken, not the end (context.WithoutCancel)
	}
	return h, true
}
