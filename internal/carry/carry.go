package carry

import "context"

// Values is what a context carries on. A Values in a context is never changed: With makes a
// new one.
type Values struct {
	DyeKey  string            // the dyeing key, when Dyed
	Dyed    bool              // calls made with the context are dyed
	Cookies map[string]string // read only; nil: none
	TraceID string            // the trace id (package tracekey), when Traced
	Traced  bool              // calls made with the context carry the trace
}

type ctxKey struct{}

// From returns the Values of ctx, nil if it carries none.
func From(ctx context.Context) *Values {
	v, _ := ctx.Value(ctxKey{}).(*Values)
	return v
}

// With returns a context carrying the Values of ctx changed by set (which changes a copy).
func With(ctx context.Context, set func(v *Values)) context.Context {
	var v Values
	if old := From(ctx); old != nil {
		v = *old
	}
	set(&v)
	return context.WithValue(ctx, ctxKey{}, &v)
}
