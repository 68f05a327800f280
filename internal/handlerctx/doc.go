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
package handlerctx

// Handler is implemented by the ctx package server hands its handlers.
type Handler interface {
	// HandlerCtx marks the ctx; it does nothing.
	HandlerCtx()
}
