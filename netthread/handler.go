package netthread

import (
	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// handler receives gnet's callbacks for a Thread's loop and hands each connection's events to
// the AdapterProxy stored as its context. Every method runs on the loop goroutine and holds the
// loop side (enter) while it runs.
type handler struct {
	gnet.BuiltinEventEngine
	t *Thread
}

func (h *handler) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	defer h.t.exit(h.t.enter())
	switch d := c.Context().(type) {
	case adapterproxy.Dialed:
		h.t.now = call.Now()
		d.A.Opened(c, d.Gen)
		h.t.sweep()
		h.t.flush()
	case tlsDialed:
		h.t.now = call.Now()
		lc := d.sess.Attach(c)
		d.A.Opened(lc, d.Gen)
		action := gnet.None
		if d.A.Holds(lc) {
			// The handshake and the auth exchange, off the loop, may have read past their own
			// records: what the peer sent right after them (a push with the auth answer) is in
			// the session's buffers, and no byte may come on the socket to make OnTraffic read
			// it. Read it now, if there is any (the connection's first turn is OnTraffic's
			// otherwise, as on TCP).
			if err := lc.Pump(); err != nil {
				action = gnet.Close // OnClose reports the cause
			} else if lc.InboundBuffered() > 0 {
				action = d.A.OnTraffic(lc)
			}
		}
		h.t.sweep()
		h.t.flush()
		return nil, action
	}
	return nil, gnet.None
}

func (h *handler) OnTraffic(c gnet.Conn) gnet.Action {
	t := h.t
	if _, ok := c.Context().(anchorCtx); ok {
		// The anchor: its bytes are wakeups.
		defer t.exit(t.enter())
		_, _ = c.Discard(-1)
		t.now = call.Now()
		if t.run() > 0 { // a turn of the deadline ticker alone is no wakeup to drain the queue
			t.counts.Wakeups++
		}
		return gnet.None
	}
	// Replies: the turn ends with a drain of the queue (handBack), so the loop holds the
	// wakeup flag through it, unless a wakeup is on its way already.
	held := t.notified.CompareAndSwap(false, true)
	entered := t.enter()
	t.now = call.Now()
	action := h.replies(c)
	if held {
		t.handBack() // sweeps and flushes too
	} else {
		t.sweep()
		t.flush() // a protocol error may have retried calls on other connections
	}
	t.exit(entered)
	return action
}

// replies is OnTraffic's work on c, a connection's bytes, inside the loop side; the turn's
// sweep and flush are OnTraffic's.
func (h *handler) replies(c gnet.Conn) gnet.Action {
	switch ctx := c.Context().(type) {
	case *adapterproxy.AdapterProxy:
		return ctx.OnTraffic(c)
	case *tlsconn.Bound:
		// A TLS connection (tls.go): decrypt, then read as on TCP.
		err := ctx.Conn.Pump()
		action := gnet.None
		if r, ok := ctx.Value.(adapterproxy.Reader); ok {
			action = r.OnTraffic(ctx.Conn)
		}
		if err != nil {
			return gnet.Close // OnClose reports the cause
		}
		return action
	case adapterproxy.Reader: // a connection its AdapterProxy moved off, still read (drain.go)
		return ctx.OnTraffic(c)
	default:
		// A connection being closed (given up dial, detached after a protocol error).
		_, _ = c.Discard(-1)
		return gnet.Close
	}
}

func (h *handler) OnClose(c gnet.Conn, err error) gnet.Action {
	defer h.t.exit(h.t.enter())
	switch ctx := c.Context().(type) {
	case *tlsconn.Bound:
		if r, ok := ctx.Value.(adapterproxy.Reader); ok {
			h.t.now = call.Now()
			r.OnClose(ctx.Conn, ctx.Conn.Cause(err))
			h.t.sweep()
			h.t.flush()
		}
	case adapterproxy.Reader: // the AdapterProxy, or a connection it moved off
		h.t.now = call.Now()
		ctx.OnClose(c, err)
		h.t.sweep()
		h.t.flush() // calls never written may have been retried on other connections
	case anchorCtx:
		h.t.anchorLost(err)
	}
	return gnet.None
}
