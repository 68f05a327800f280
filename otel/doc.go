// Package tarsotel is OpenTelemetry tracing for tarscomm: a client interceptor that makes a span
// per call and a server interceptor that makes a span per request served (package interceptor's
// hooks), in a Go module of its own so that OpenTelemetry never enters the library's go.mod.
//
// The client span, named "<servant>/<function>", carries rpc.system "tars", rpc.service,
// rpc.method, server.address and server.port (the endpoint the call went to), tars.endpoint and
// tars.return_code; a call that fails records its error. The trace context goes two ways at once:
// W3C trace context (traceparent, tracestate) in the request's context map, and TARS's own trace
// key, the iMessageType bit 0x100 with status "STATUS_TRACE_KEY" = "<traceID>|<spanID>" (TarsCpp's
// two-part form; traceID is "0-<32 hex digits>", flag 0 asking no parameter logging), so that a
// TarsCpp or TarsGo service downstream joins the trace.
//
// The server interceptor continues the W3C context of the request's context map; without one it
// continues a TARS trace key (bit and key both present, as TarsCpp requires): its trace id from
// the hex digits after the traceID's '-', the parent span from the spanID, either hashed to size
// when it is not hex of the right length. The handler's ctx holds the server span, so that calls
// made with it from the handler are its children.
//
//	client := tarsotel.ClientInterceptor(tarsotel.Options{}) // an interceptor.Client
//	srv := tarsotel.ServerInterceptor(tarsotel.Options{})    // an interceptor.Server
//
// Hand them to the communicator's and the server's interceptor options.
//
// Options default to the global TracerProvider and a W3C TraceContext propagator.
//
// A span that is not sampled still carries the trace context on, but costs no attributes: the
// endpoint and return-code attributes are set on recording spans only, and each function's span
// name and start options are made once (for up to 1,024 functions per interceptor). The spans
// only add values to a server handler's ctx, so the calls a handler relays with it still take
// its deadline without watching it (no timer per request).
package tarsotel
