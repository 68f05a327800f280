package netthread

import (
	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/internal/call"
)

// handler receives gnet's callbacks for a Thread's loop and hands each connection's events to
// the AdapterProxy stored as its context. Every method runs on the loop goroutine.
type handler struct {
	gnet.BuiltinEventEngine
	t *Thread
}

func (h *handler) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if a, ok := c.Context().(*adapterproxy.AdapterProxy); ok {
		h.t.now = call.Now()
		a.OnOpen(c)
		h.t.flush()
	}
	return nil, gnet.None
}

func (h *handler) OnTraffic(c gnet.Conn) gnet.Action {
	a, ok := c.Context().(*adapterproxy.AdapterProxy)
	if !ok {
		// The anchor: its bytes are wakeups.
		_, _ = c.Discard(-1)
		h.t.run()
		return gnet.None
	}
	h.t.now = call.Now()
	action := a.OnTraffic(c)
	h.t.flush() // a protocol error may have retried calls on other connections
	return action
}

func (h *handler) OnClose(c gnet.Conn, err error) gnet.Action {
	if a, ok := c.Context().(*adapterproxy.AdapterProxy); ok {
		h.t.now = call.Now()
		a.OnClose(c, err)
		h.t.flush() // calls never written may have been retried on other connections
	}
	return gnet.None
}
