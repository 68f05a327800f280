package dye

import (
	"context"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/carry"
)

// StatusKey is the status map key of the dyeing key.
const StatusKey = "STATUS_DYED_KEY"

// MessageType is the iMessageType bit of a dyed request.
const MessageType = codec.MessageDyed

// WithKey returns a context whose calls are dyed with key (which may be empty: the bit alone).
func WithKey(ctx context.Context, key string) context.Context {
	return carry.With(ctx, func(v *carry.Values) { v.DyeKey, v.Dyed = key, true })
}

// FromContext returns the dyeing key of ctx, and whether it has one.
func FromContext(ctx context.Context) (string, bool) {
	if v := carry.From(ctx); v != nil && v.Dyed {
		return v.DyeKey, true
	}
	return "", false
}

// FromRequest returns the dyeing key of a request with the given iMessageType and status map,
// and whether it is dyed (the bit set; the key may be empty).
func FromRequest(messageType int32, status map[string]string) (string, bool) {
	if messageType&MessageType == 0 {
		return "", false
	}
	return status[StatusKey], true
}

// Apply returns messageType with the dyed bit and status with the key, copying status rather than
// changing it (the caller's map may be shared).
func Apply(messageType int32, status map[string]string, key string) (int32, map[string]string) {
	n := make(map[string]string, len(status)+1)
	for k, v := range status {
		n[k] = v
	}
	n[StatusKey] = key
	return messageType | MessageType, n
}
