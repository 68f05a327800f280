package tarsotel

import (
	"context"
	"encoding/hex"
	"hash/fnv"
	"net"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interceptor"
)

// TARS's trace wire constants.
const (
	MessageTrace   = codec.MessageTrace // iMessageType bit 0x100
	TraceStatusKey = "STATUS_TRACE_KEY"
)

const scope = "github.com/tarscomm/tarscomm/otel"

// Options configure the interceptors.
type Options struct {
	// TracerProvider makes the tracer. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator carries the context in the request's context map. Default
	// propagation.TraceContext{} (W3C traceparent and tracestate).
	Propagator propagation.TextMapPropagator
}

func (o *Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(scope)
}

func (o *Options) propagator() propagation.TextMapPropagator {
	if o.Propagator == nil {
		return propagation.TraceContext{}
	}
	return o.Propagator
}

// infoCarrier writes into a call's context map.
type infoCarrier struct{ info *interceptor.CallInfo }

func (c infoCarrier) Get(k string) string { return c.info.Context[k] }
func (c infoCarrier) Set(k, v string)     { c.info.SetContext(k, v) }
func (c infoCarrier) Keys() []string {
	ks := make([]string, 0, len(c.info.Context))
	for k := range c.info.Context {
		ks = append(ks, k)
	}
	return ks
}

// Keys of the endpoint attributes: the server's on a client span, the client's on a server span.
var (
	serverKeys = [2]attribute.Key{"server.address", "server.port"}
	clientKeys = [2]attribute.Key{"client.address", "client.port"}
)

// setEndpoint sets the address and port of addr ("host:port") on span, under keys.
func setEndpoint(span trace.Span, keys [2]attribute.Key, addr string) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	port, _ := strconv.Atoi(p)
	span.SetAttributes(keys[0].String(valid(host)), keys[1].Int(port))
}

// ClientInterceptor returns the client hook: a span per call, its context in the request.
func ClientInterceptor(o Options) interceptor.Client {
	tr, prop, sts := o.tracer(), o.propagator(), newStarts(trace.SpanKindClient)
	return func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		st := sts.get(info.Servant, info.Function)
		ctx, span := tr.Start(ctx, st.name, st.opts...)
		prop.Inject(ctx, infoCarrier{info})
		if sc := span.SpanContext(); sc.IsValid() {
			info.MessageType |= MessageTrace
			info.SetStatus(TraceStatusKey, TraceKey(sc))
		}
		info.OnEnd(func(i *interceptor.CallInfo) {
			if !span.IsRecording() { // not sampled: nothing to set
				span.End()
				return
			}
			setEndpoint(span, serverKeys, i.Endpoint)
			span.SetAttributes(attribute.String("tars.endpoint", valid(i.Endpoint)), attribute.Int("tars.return_code", int(i.Ret)))
			if i.Err != nil {
				err := validErr(i.Err)
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		})
		return next(ctx, info)
	}
}

// ServerInterceptor returns the server hook: a span per request, child of the caller's.
func ServerInterceptor(o Options) interceptor.Server {
	tr, prop, sts := o.tracer(), o.propagator(), newStarts(trace.SpanKindServer)
	return func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
		ctx = prop.Extract(ctx, propagation.MapCarrier(info.Context))
		if !trace.SpanContextFromContext(ctx).IsValid() && info.MessageType&MessageTrace != 0 {
			if tid, sid, ok := ParseTraceKey(info.Status[TraceStatusKey]); ok {
				ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
					TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true,
				}))
			}
		}
		st := sts.get(info.Servant, info.Function)
		ctx, span := tr.Start(ctx, st.name, st.opts...)
		recording := span.IsRecording()
		if recording {
			setEndpoint(span, clientKeys, info.RemoteAddr)
		}
		var err error
		// The outcome is set as the span ends, in a deferred call: a handler that ends its
		// goroutine (runtime.Goexit) never returns here, and the server sets info.Ret for it.
		defer func() {
			if recording {
				span.SetAttributes(attribute.Int("tars.return_code", int(info.Ret)))
				if err != nil {
					span.RecordError(validErr(err))
				}
				if err != nil || info.Ret != 0 {
					span.SetStatus(codes.Error, "TARS return code "+strconv.Itoa(int(info.Ret)))
				}
			}
			span.End()
		}()
		err = next(ctx, info)
		return err
	}
}

// TraceKey returns TARS's two-part trace key of sc: "0-<trace id hex>|<span id hex>".
func TraceKey(sc trace.SpanContext) string {
	return "0-" + sc.TraceID().String() + "|" + sc.SpanID().String()
}

// ParseTraceKey reads a TARS trace key, "traceID|spanID" (the caller's span) or TarsCpp's
// three-part "traceID|spanID|parentSpanID" (whose spanID is then the caller's): the trace id is
// the part of traceID after its first '-', the span id the spanID; each is decoded as hex when it
// has the length OpenTelemetry's ids have, and hashed to that length otherwise.
func ParseTraceKey(key string) (trace.TraceID, trace.SpanID, bool) {
	parts := strings.Split(key, "|")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return trace.TraceID{}, trace.SpanID{}, false
	}
	t := parts[0]
	if i := strings.IndexByte(t, '-'); i >= 0 {
		t = t[i+1:]
	}
	var tid trace.TraceID
	if b, err := hex.DecodeString(t); err == nil && len(b) == len(tid) {
		copy(tid[:], b)
	} else {
		h := fnv.New128a()
		h.Write([]byte(parts[0]))
		copy(tid[:], h.Sum(nil))
	}
	var sid trace.SpanID
	if b, err := hex.DecodeString(parts[1]); err == nil && len(b) == len(sid) {
		copy(sid[:], b)
	} else {
		h := fnv.New64a()
		h.Write([]byte(parts[1]))
		copy(sid[:], h.Sum(nil))
	}
	return tid, sid, tid.IsValid() && sid.IsValid()
}
