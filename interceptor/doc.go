// Package interceptor defines the hooks through which instrumentation (tracing, metrics,
// dyeing) sees the calls a Communicator makes and the requests a server serves, without the
// library depending on any of it: a Client interceptor wraps each outgoing call, a Server
// interceptor each request served.
//
// # Client
//
// A Client runs on the caller's goroutine before the request is encoded. It may add to the
// request's context and status maps (SetContext, SetStatus) and its iMessageType bits, hand a
// derived ctx to next (what it puts there with dye.WithKey, cookie.WithCookies or
// tracekey.WithTraceID goes on the request as from the caller's ctx, under what the call has
// set already: a dyeing key or trace it carries stays), and register with OnEnd what to do when
// the call ends. It must call next at most once, before it returns, and return its error (or its
// own, without calling next, to refuse the call): a second call, or one after it returned, makes
// no call and returns an error.
// For an async call (info.Async) the ctx handed to next gives the call its values and deadline,
// but only the caller's ctx cancels it: the call outlives the interceptor, and a cancel it defers
// (ctx, cancel := context.WithTimeout(ctx, d); defer cancel()) must not end it. An async call's
// interceptor that returns while the next it started on another goroutine still runs makes
// AsyncInvoke wait for that next: the call then has one outcome.
//
// What the interceptor returns is what a sync or one-way caller gets: one that returns nil after
// next failed makes the call succeed for its caller (a fail-open policy), the reply left empty.
// An async call's outcome is its callback's: the callback gets the call's own error whatever the
// interceptor returns, and AsyncInvoke returns an error when the call was refused without being
// sent, even if the interceptor swallowed it (the callback would never run).
//
// The call ends once, whatever its kind: the communicator fills Endpoint, Ret and Err and calls
// End, which runs the OnEnd functions in the reverse order of their registration. For a sync call
// End runs before next returns; for an async call, before the callback, on the async worker;
// for a one-way call, once the request is written; for a call that fails before it is sent,
// before next returns its error. The functions must not block. An interceptor that panics
// before calling next ends the call for the interceptors outside it (End, with an error), and
// the panic goes on to the caller: the library recovers none on the caller's goroutine.
//
// # Server
//
// A Server runs on the goroutine that runs the handler, around it: next runs the handler with
// the ctx it is given (so that calls made from the handler with that ctx carry what the
// interceptor put in it) and sets info.Ret to the reply's TARS return code before returning the
// handler's error. In a chain (ChainServer, or several given to the server), the next of each
// interceptor sets info.Ret from what the interceptors inside it return (RetOf): an outer one
// sees the code the client gets, even when an inner one refused, replaced or swallowed the error,
// or panicked (-99, as the server answers a panic).
//
// ChainClient and ChainServer compose interceptors: the first given is the outermost; a nil one
// is skipped.
package interceptor
