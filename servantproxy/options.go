package servantproxy

import (
	"time"

	"github.com/tarscomm/tarscomm/interceptor"
)

// CallOption changes one call. Options apply in order: a later option of a kind replaces an
// earlier one (WithTimeout(-1), WithTimeout(time.Second) is a call with a one-second timeout). A
// nil CallOption is skipped.
type CallOption func(*callOptions)

type callOptions struct {
	hash    uint64
	hashed  bool
	timeout time.Duration
	context map[string]string
	status  map[string]string
	rspCtx  *map[string]string
	rspSt   *map[string]string
	dyeKey  string
	dyed    bool
	mt      int32                 // iMessageType bits added by interceptors or dyeing
	info    *interceptor.CallInfo // the call as the interceptors see it; nil without hooks
	queued  bool                  // an async call was queued: its End runs on the async worker
	timed   bool                  // WithTimeout was given (timeout ≤ 0 then fails the call, unsent)
}

// WithDyeing dyes the call with key (TARS dyeing: iMessageType 0x04 and STATUS_DYED_KEY), as
// dye.WithKey does for every call made with a context.
func WithDyeing(key string) CallOption {
	return func(o *callOptions) { o.dyeKey, o.dyed = key, true }
}

// WithHash routes the call by code: calls with the same code go to the same net thread and the
// same endpoint (while the endpoint list is unchanged), and the request is marked as hashed.
func WithHash(code uint64) CallOption {
	return func(o *callOptions) { o.hash, o.hashed = code, true }
}

// WithTimeout replaces the configured invoke timeout for this call. The context's deadline, if
// earlier, still wins. d must be positive: with 0 or less the call fails at once, unsent (an
// async call without a callback), with an error matching ErrInvalidTimeout; leave the option out
// to use the configured timeout. A later WithTimeout replaces an earlier one, an invalid one
// too. A timeout too large to represent (math.MaxInt64) means no deadline of the call's own, and
// the server is sent the largest iTimeout it can hold (about 24.8 days).
func WithTimeout(d time.Duration) CallOption {
	return func(o *callOptions) { o.timeout, o.timed = d, true }
}

// WithContext sends m as the request's TARS context (RequestPacket.context). m is encoded before
// the call returns and may be reused afterwards.
func WithContext(m map[string]string) CallOption {
	return func(o *callOptions) { o.context = m }
}

// WithStatus sends m as the request's TARS status map (RequestPacket.status).
func WithStatus(m map[string]string) CallOption {
	return func(o *callOptions) { o.status = m }
}

// WithResponseContext stores the reply's TARS context map in *dst (nil if the server sent none)
// when a reply came, a success or a server's error code: for a sync call before it returns, for
// an async call before its callback runs, for a future call before the future completes — so
// the callback, or whoever waits on the future, reads *dst. Give each call in flight its own
// dst. Without a reply (a timeout, a connection error, a one-way call) dst is left alone.
// Without the option nothing is stored and nothing allocated.
func WithResponseContext(dst *map[string]string) CallOption {
	return func(o *callOptions) { o.rspCtx = dst }
}

// WithResponseStatus stores the reply's TARS status map in *dst, as WithResponseContext does
// the context.
func WithResponseStatus(dst *map[string]string) CallOption {
	return func(o *callOptions) { o.rspSt = dst }
}
