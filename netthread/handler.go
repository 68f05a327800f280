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
		d.A.Opened(d.sess.Attach(c), d.Gen)
		h.t.sweep()
		h.t.flush()
	}
	return nil, gnet.None
}

func (h *handler) OnTraffic(c gnet.Conn) gnet.Action {
	t := h.t
	if _, ok := c.Context().(anchorCtx); ok {
		defer t.exit(t.enter())
		return h.traffic(c)
	}
	// Replies: the turn ends with a drain of the queue (handBack), so the loop holds the
	// wakeup flag through it, unless a wakeup is on its way already.
	held := t.notified.CompareAndSwap(false, true)
	entered := t.enter()
	action := h.traffic(c)
	if held {
		t.handBack()
	}
	t.exit(entered)
	return action
}

// traffic is OnTraffic's work on c, inside the loop side.
func (h *handler) traffic(c gnet.Conn) gnet.Action {
	switch ctx := c.Context().(type) {
	case *adapterproxy.AdapterProxy:
		h.t.now = call.Now()
		action := ctx.OnTraffic(c)
		h.t.sweep()
		h.t.flush() // a protocol error may have retried calls on other connections
		return action
	case *tlsconn.Bound:
		// A TLS connection (tls.go): decrypt, then read as on TCP.
		h.t.now = call.Now()
		err := ctx.Conn.Pump()
		action := gnet.None
		if a, ok := ctx.Value.(*adapterproxy.AdapterProxy); ok {
			action = a.OnTraffic(ctx.Conn)
		}
		h.t.sweep()
		h.t.flush()
		if err != nil {
			return gnet.Close // OnClose reports the cause
		}
		return action
	case anchorCtx:
		// The anchor: its bytes are wakeups.
		_, _ = c.Discard(-1)
		h.t.counts.Wakeups++
		h.t.run()
		return gnet.None
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
		if a, ok := ctx.Value.(*adapterproxy.AdapterProxy); ok {
			h.t.now = call.Now()
			a.OnClose(ctx.Conn, ctx.Conn.Cause(err))
			h.t.sweep()
			h.t.flush()
		}
	case *adapterproxy.AdapterProxy:
		h.t.now = call.Now()
		ctx.OnClose(c, err)
		h.t.sweep()
		h.t.flush() // calls never written may have been retried on other connections
	case anchorCtx:
		h.t.anchorLost(err)
	}
	return gnet.None
}
