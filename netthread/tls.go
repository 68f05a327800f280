package netthread

import (
	"context"
	"net"
	"time"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// TLS on the net thread (package tlsconn): the dial goroutine connects, runs the handshake and
// TARS authentication on the connection within the connect timeout, then detaches the session
// and enrolls the connection like a TCP one. On the loop the AdapterProxy gets a
// tlsconn.LoopConn, which encrypts in Write and decrypts in Pump (run by OnTraffic before the
// AdapterProxy reads), so that the AdapterProxy runs the same code as on TCP. Plain TCP
// connections never reach anything here.

// tlsDialed is the context of an enrolled TLS connection until OnOpen: the dial and its session.
type tlsDialed struct {
	adapterproxy.Dialed
	sess *tlsconn.Session
}

// dialTLS connects to a's ssl endpoint, runs the TLS handshake with the servant's settings and,
// for -e 1, the authentication; all within the connect timeout. The session is detached: the
// loop owns the connection returned.
func (t *Thread) dialTLS(a *adapterproxy.AdapterProxy) (net.Conn, *tlsconn.Session, error) {
	limit := a.ConnectTimeout()
	ctx, cancel := context.WithTimeout(t.ctx, limit)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", a.Addr())
	if err != nil {
		return nil, nil, err
	}
	cfg, ok := t.opts.TLS[a.Servant()]
	if !ok {
		cfg = t.opts.TLS[""]
	}
	sess, err := tlsconn.ClientSession(ctx, nc, cfg, a.Endpoint().Host, a.Addr(), limit)
	if err != nil {
		return nil, nil, err
	}
	if a.Endpoint().AuthType == endpoint.AuthLocal {
		deadline, _ := ctx.Deadline()
		if err := t.authenticate(sess.TLS(), a, deadline); err != nil {
			_ = nc.Close()
			if te := tlsconn.AsFailure(a.Addr(), err); te != nil {
				return nil, nil, te // a refused client certificate, not a refused key
			}
			return nil, nil, err
		}
		sess.Heard()
	}
	sess.Detach()
	return nc, sess, nil
}

// authenticate runs TARS authentication on the new connection nc to a's endpoint (-e 1) with
// the servant's credentials, before deadline.
func (t *Thread) authenticate(nc net.Conn, a *adapterproxy.AdapterProxy, deadline time.Time) error {
	cred, ok := t.opts.Auth[a.Servant()]
	if !ok {
		cred = t.opts.Auth[""]
	}
	if t.ctx.Err() != nil {
		return call.ErrClosed
	}
	// Close cancels t.ctx: end the exchange then, as for a dial. By closing nc, not by a
	// deadline, which Handshake sets itself and would put back if Close came first.
	stop := context.AfterFunc(t.ctx, func() { _ = nc.Close() })
	defer stop()
	return auth.Handshake(nc, a.Servant(), a.Addr(), cred, deadline)
}
