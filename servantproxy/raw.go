package servantproxy

import "context"

// InvokeOnewayRaw is InvokeOneway for bodies the caller encodes itself (TARS-encoded .tars
// interfaces): body is sent as sBuffer of a one-way request, to which the server sends no
// reply. It returns once the request has been written to a connection, or with the error that
// prevented it.
func (s *ServantProxy) InvokeOnewayRaw(ctx context.Context, fn string, body []byte, opts ...CallOption) error {
	if s == nil || s.p == nil {
		return errUnbound
	}
	if ctx == nil {
		return errNilContext
	}
	return s.p.oneway(ctx, fn, collect(opts), nil, body)
}
