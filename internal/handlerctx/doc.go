// Package handlerctx lets a server handler's ctx tell the client's calls made with it that they
// need not watch it.
//
// A server handler's ctx (package server) carries its client's deadline, and ends at it or when
// the handler returns. A tarscomm call made with that ctx takes the deadline as its own
// (servantproxy: the earlier of its timeout and ctx's deadline, sent as iTimeout). Watching the
// ctx besides, as a call watches any ctx that can end, would make the ctx's timer
// (context.WithDeadline: ~750 ns and 5 allocations) on every request a handler relays, for an
// end the call's own deadline already keeps. So a call does not watch a ctx that is a Handler:
// a sync call cannot outlive its handler anyway, and an async call a handler starts is not
// cancelled when the handler returns; it ends by its deadline.
//
// A server interceptor that only adds values to the handler's ctx (a tracing span, a logger)
// keeps the mark with Keep; a ctx with a cancel or deadline of its own never has it.
package handlerctx

import "context"

// Handler is implemented by the ctx package server hands its handlers.
type Handler interface {
	// HandlerCtx marks the ctx; it does nothing.
	HandlerCtx()
}

// Keep returns derived, which must have been made from parent by adding values only
// (context.WithValue, or what is built on it, such as OpenTelemetry's span contexts): its Done,
// Deadline and Err are parent's. When parent is a Handler, so is the result; otherwise derived
// is returned as it is.
func Keep(parent, derived context.Context) context.Context {
	if _, ok := parent.(Handler); !ok {
		return derived
	}
	if _, ok := derived.(Handler); ok {
		return derived
	}
	return kept{derived}
}

// kept is a Handler's ctx with values added.
type kept struct{ context.Context }

func (kept) HandlerCtx() {}
