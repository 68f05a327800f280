package cookie

import (
	"context"
	"strings"

	"github.com/tarscomm/tarscomm/internal/carry"
)

// frameworkPrefix starts the status keys of the framework (STATUS_DYED_KEY, STATUS_SETNAME_VALUE,
// STATUS_TRACE_KEY, ...), which are not cookies.
const frameworkPrefix = "STATUS_"

// WithCookies returns a context whose calls carry cookies in their status maps. cookies is not
// copied: it must not change afterwards.
func WithCookies(ctx context.Context, cookies map[string]string) context.Context {
	return carry.With(ctx, func(v *carry.Values) { v.Cookies = cookies })
}

// FromContext returns the cookies of ctx (nil if none). The map is shared: read only.
func FromContext(ctx context.Context) map[string]string {
	if v := carry.From(ctx); v != nil {
		return v.Cookies
	}
	return nil
}

// FromRequest returns the cookies of a request's status map, in a new map: the entries whose key
// is not "STATUS_" followed by at least one character, in any case (TarsCpp's rule). nil if
// there are none.
func FromRequest(status map[string]string) map[string]string {
	var out map[string]string
	for k, v := range status {
		if len(k) > len(frameworkPrefix) && strings.EqualFold(k[:len(frameworkPrefix)], frameworkPrefix) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(status))
		}
		out[k] = v
	}
	return out
}

// Apply returns status with the cookies added, an entry status has already kept as it is. It
// copies status rather than changing it (the caller's map may be shared); with no cookies it
// returns status.
func Apply(status, cookies map[string]string) map[string]string {
	if len(cookies) == 0 {
		return status
	}
	n := make(map[string]string, len(status)+len(cookies))
	for k, v := range cookies {
		n[k] = v
	}
	for k, v := range status {
		n[k] = v
	}
	return n
}
