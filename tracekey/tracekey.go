package tracekey

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"strings"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/carry"
)

// StatusKey is the status map key of the trace key.
const StatusKey = "STATUS_TRACE_KEY"

// MessageType is the iMessageType bit of a traced request.
const MessageType = codec.MessageTrace

// FromRequest returns the trace id of a request with the given iMessageType and status map, and
// whether it is traced: the bit set and a key of two or three parts separated by '|' (TarsCpp's
// TraceContext::init accepts no other), the first non-empty.
func FromRequest(messageType int32, status map[string]string) (traceID string, ok bool) {
	if messageType&MessageType == 0 {
		return "", false
	}
	key, found := status[StatusKey]
	if !found {
		return "", false
	}
	id, rest, cut := strings.Cut(key, "|")
	if !cut || id == "" || strings.Count(rest, "|") > 1 {
		return "", false
	}
	return id, true
}

// WithTraceID returns a context whose calls are traced with traceID.
func WithTraceID(ctx context.Context, traceID string) context.Context {
	return carry.With(ctx, func(v *carry.Values) { v.TraceID, v.Traced = traceID, true })
}

// FromContext returns the trace id of ctx, and whether it has one.
func FromContext(ctx context.Context) (string, bool) {
	if v := carry.From(ctx); v != nil && v.Traced {
		return v.TraceID, true
	}
	return "", false
}

// Apply returns messageType with the trace bit and status with "<traceID>|<a new span id>" (16
// hex digits, as TarsCpp's proxies start a new span for each call), copying status rather than
// changing it (the caller's map may be shared).
func Apply(messageType int32, status map[string]string, traceID string) (int32, map[string]string) {
	n := make(map[string]string, len(status)+1)
	for k, v := range status {
		n[k] = v
	}
	n[StatusKey] = traceID + "|" + NewSpanID()
	return messageType | MessageType, n
}

// NewSpanID returns a random span id: 16 hex digits, never all zeros.
func NewSpanID() string {
	var b [8]byte
	for {
		u := rand.Uint64()
		if u == 0 {
			continue
		}
		for i := range b {
			b[i] = byte(u >> (8 * i))
		}
		return hex.EncodeToString(b[:])
	}
}
