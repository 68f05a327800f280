// Package tracekey carries TARS's call-chain trace (TarsCpp's TraceContext) from the request a
// server handler serves into the calls the handler makes, as TarsCpp's servers do without any
// plugin: a request with the iMessageType bit 0x100 (codec.MessageTrace) and a status entry
// STATUS_TRACE_KEY = "<traceID>|<spanID>" (or TarsCpp's "<traceID>|<spanID>|<parentSpanID>")
// puts its trace id in the handler's context (FromRequest, WithTraceID: the server does it), and
// every call made with that context carries the bit and "<traceID>|<a new span id>" (Apply: the
// client does it), so that the whole chain shares one trace id.
//
// A call whose interceptors set the bit themselves (the otel module's, which writes its own
// span's key) keeps theirs. The request's context map is not carried on (TarsCpp's is not).
package tracekey
