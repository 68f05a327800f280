package servantproxy

import (
	"context"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// InvokeOnewayRaw is InvokeOneway for bodies the caller encodes itself (TARS-encoded .tars
// interfaces): body is sent as sBuffer of a one-way request, to which the server sends no
// reply. It returns once the request has been written to a connection, or with the error that
// prevented it.
func (s *ServantProxy) InvokeOnewayRaw(ctx context.Context, fn string, body []byte, opts ...CallOption) error {
	if s == nil || s.p == nil {
		return errUnbound
	}
	c, t, err := s.p.prepare(ctx, fn, collect(opts), s.p.syncTO, codec.PacketOneway, nil, body)
	if err != nil {
		return err
	}
	c.Oneway = true
	if err := s.p.wait(ctx, c, t); err != nil {
		return err
	}
	err = c.Err
	call.Put(c)
	return err
}
