// Package handlerctx lets a server handler's ctx, and the ctxs made from it by adding values,
// tell the client's calls made with them that they need not watch them.
//
// A server handler's ctx (package server) carries its client's deadline, and ends at it or when
// the handler returns. A tarscomm call made with that ctx takes the deadline as its own
// (servantproxy: the earlier of its timeout and ctx's deadline, sent as iTimeout). Watching the
// ctx besides, as a call watches any ctx that can end, would make the ctx's timer
// (context.WithDeadline: ~750 ns and 5 allocations) on every request a handler relays, for an
// end the call's own deadline already keeps. So a call does not watch a ctx that is Unwatched:
// a sync call cannot outlive its handler anyway, and an async call a handler starts is not
// cancelled when the handler returns; it ends by its deadline.
//
// The same holds for a ctx made from the handler's by adding values only (a tracing span, a
// request id, a logger): it ends when the handler's ends. A ctx that can end on its own
// (context.WithCancel, WithDeadline, WithTimeout, AfterFunc) asks its parent's Done as it is
// made; a handler's ctx whose Done was asked for is therefore watched, with all the ctxs made
// from it. A Context type of another package that takes its values from a handler's ctx but
// ends on its own without asking that ctx's Done would not be watched: a call made with it would
// end by its deadline rather than by its cancel.
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
}

// Unwatched reports whether ctx ends when a server handler's ctx ends, and for no other reason
// the calls made with it do not already keep: ctx is a handler's ctx, or was made from one whose
// Done was never asked for (by adding values only).
func Unwatched(ctx context.Context) bool {
	if _, ok := ctx.(Handler); ok {
		return true
	}
	h, ok := ctx.Value(Key{}).(Handler)
	return ok && !h.DoneAsked()
}
