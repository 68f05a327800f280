package interceptor

import (
	"context"
	"errors"
	"slices"
)

// CallInfo describes one outgoing call to the interceptors of a client.
type CallInfo struct {
	// Servant and Function name the call.
	Servant, Function string
	// Oneway and Async tell the kind of call (neither: sync).
	Oneway, Async bool
	// MessageType holds the request's iMessageType bits. Those the call carries before the chain
	// (hash, set, dyeing, a trace relayed from a server handler's ctx) are set already;
	// interceptors may set more.
	MessageType int32
	// Context and Status are the request's context and status maps, nil while empty; Status holds
	// already the entries of the set, the dyeing, the cookies and the relayed trace. Add to them
	// with SetContext and SetStatus; the maps given by the caller are copied before the first
	// change, never changed.
	Context, Status map[string]string

	// Endpoint ("host:port"), Ret and Err are set by the communicator when the call ends, before
	// End: the endpoint the call was last sent to ("" if none), the reply's TARS return code (0
	// for a success, and for a call that got no reply), and the call's error.
	Endpoint string
	Ret      int32
	Err      error

	ends         []func(*CallInfo)
	ownCtx, ownS bool
}

// SetContext sets key in the request's context map.
func (c *CallInfo) SetContext(key, value string) {
	c.Context = set(c.Context, &c.ownCtx, key, value)
}

// SetStatus sets key in the request's status map.
func (c *CallInfo) SetStatus(key, value string) {
	c.Status = set(c.Status, &c.ownS, key, value)
}

func set(m map[string]string, own *bool, key, value string) map[string]string {
	if !*own {
		n := make(map[string]string, len(m)+1)
		for k, v := range m {
			n[k] = v
		}
		m, *own = n, true
	}
	m[key] = value
	return m
}

// OnEnd registers f to run when the call ends.
func (c *CallInfo) OnEnd(f func(*CallInfo)) { c.ends = append(c.ends, f) }

// End records err as the call's error and runs the OnEnd functions, last registered first. The
// communicator calls it exactly once per call that went through a Client.
func (c *CallInfo) End(err error) {
	c.Err = err
	for i := len(c.ends) - 1; i >= 0; i-- {
		c.ends[i](c)
	}
	c.ends = c.ends[:0]
}

// ClientInvoker sends the call: the rest of the chain, then the communicator.
type ClientInvoker func(ctx context.Context, info *CallInfo) error

// Client intercepts outgoing calls.
type Client func(ctx context.Context, info *CallInfo, next ClientInvoker) error

// ChainClient returns the interceptor running cs in order, the first outermost; nil entries are
// skipped (an instrument switched off), nil for none.
func ChainClient(cs ...Client) Client {
	cs = slices.DeleteFunc(slices.Clone(cs), func(c Client) bool { return c == nil })
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	outer, inner := cs[0], ChainClient(cs[1:]...)
	return func(ctx context.Context, info *CallInfo, next ClientInvoker) error {
		return outer(ctx, info, func(ctx context.Context, info *CallInfo) error {
			return inner(ctx, info, next)
		})
	}
}

// ServerInfo describes one request served, to the interceptors of a server.
type ServerInfo struct {
	// Servant and Function name the request.
	Servant, Function string
	// RequestID is the client's request id.
	RequestID int32
	// MessageType holds the request's iMessageType bits.
	MessageType int32
	// Oneway is set for a request that gets no reply.
	Oneway bool
	// Context and Status are the request's maps (nil when empty); read only.
	Context, Status map[string]string
	// RemoteAddr is the client's address, "host:port".
	RemoteAddr string
	// LocalAddr is the address served, "host:port".
	LocalAddr string
	// Ret is set by the server before next returns: the reply's TARS return code.
	Ret int32
}

// ServerHandler runs the handler of a request: the rest of the chain, then the handler.
type ServerHandler func(ctx context.Context, info *ServerInfo) error

// Server intercepts requests served.
type Server func(ctx context.Context, info *ServerInfo, next ServerHandler) error

// ChainServer returns the interceptor running ss in order, the first outermost; nil entries are
// skipped, nil for none. The next each interceptor gets sets info.Ret from the error the
// interceptors inside it return (RetOf), so that an outer one (tracing, metrics) sees the code
// the client gets even when an inner one refused the request, replaced the handler's error or
// swallowed it; when an inner one panics (or the handler does, or calls runtime.Goexit), it sets
// -99, what the server answers then.
func ChainServer(ss ...Server) Server {
	ss = slices.DeleteFunc(slices.Clone(ss), func(s Server) bool { return s == nil })
	switch len(ss) {
	case 0:
		return nil
	case 1:
		return ss[0]
	}
	outer, inner := ss[0], ChainServer(ss[1:]...)
	return func(ctx context.Context, info *ServerInfo, next ServerHandler) error {
		return outer(ctx, info, func(ctx context.Context, info *ServerInfo) (err error) {
			returned := false
			defer func() {
				if !returned { // a panic or a Goexit on its way out: the server answers -99
					info.Ret = retUnknown
				}
			}()
			err = inner(ctx, info, next)
			returned = true
			info.Ret = RetOf(err)
			return err
		})
	}
}

// RetOf returns the TARS return code a server answers a handler's (or an interceptor's) error
// with: 0 for nil, the code of an error that carries one (a TARSCode method, as server.Error
// has, found with errors.As) unless that code is 0 (a failure is never answered as success),
// and otherwise -99 (RetUnknown). The server answers with it: what an interceptor reads in
// info.Ret is what the client gets.
func RetOf(err error) int32 {
	if err == nil {
		return 0
	}
	var c interface{ TARSCode() int32 }
	if errors.As(err, &c) {
		if code := c.TARSCode(); code != 0 {
			return code
		}
	}
	return retUnknown
}

// retUnknown is TARS's TARSSERVERUNKNOWNERR, codec.RetUnknown (this package imports no codec).
const retUnknown = -99
