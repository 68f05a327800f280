package adapterproxy

import (
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
)

// PushSink receives what happens on an AdapterProxy's connection that no call of this client
// asked for: a packet the server pushes (a ResponsePacket with request id codec.PushRequestID,
// as TarsCpp's Current::sendPushResponse sends), and the connection's opening and closing, which
// a client of pushes needs to know (a push stream ends with its connection). Every method is
// called on the loop goroutine and must not block: it hands the work to another goroutine.
type PushSink interface {
	// Push is handed a pushed packet; r and everything it points to are valid only during the
	// call. It reports false when nobody listens (no push callback): the AdapterProxy then logs
	// the packet and drops it.
	Push(a *AdapterProxy, r *codec.ResponsePacket) bool
	// Connected is called once a connection is established (and authenticated) for a.
	Connected(a *AdapterProxy)
	// Closed is called when a connection that Connected announced is gone, by either side;
	// err says why.
	Closed(a *AdapterProxy, err error)
}

// pushed handles a packet with request id 0. Without a sink that wants it, it is dropped with a
// warning: TarsCpp's client throws and closes the connection instead, failing every call pending
// on it because of a packet none of them asked for; keeping the connection costs nothing and
// hurts nobody, and a server that pushes before the client set its callback (a race the client
// cannot always avoid) does not cost it its connection.
func (a *AdapterProxy) pushed(r *codec.ResponsePacket) {
	if r.ResultDesc == codec.ReconnectDesc {
		// A TarsGo server restarting asks its clients to move to a new connection: it reads this
		// one no more (drain.go). Not a push.
		a.reconnect = !a.udp
		return
	}
	a.stats.Pushes++
	if a.draining {
		// Read on a connection moved off (drain.go), whose close the sink was told (forget):
		// what was pushed on it is gone, as its OnClose said; delivered now, it would look like
		// a push of the subscription made again on the new connection.
		a.stats.PushesDropped++
		a.log.Debug("server push on a connection moved off, dropped", zap.String("func", r.Status[PushFuncKey]), zap.Int("bytes", len(r.Buffer)))
		return
	}
	if a.opts.Push != nil && a.opts.Push.Push(a, r) {
		return
	}
	a.stats.PushesDropped++
	a.warn("server push dropped: no push callback on the proxy (or its async queue is full)",
		zap.String("func", r.Status[PushFuncKey]), zap.Int32("ret", r.Ret), zap.Int("bytes", len(r.Buffer)))
}

// PushFuncKey is the status key in which a push packet names its function (TarsCpp's
// sendPushResponse sets it; the older form sends none).
const PushFuncKey = "TARS_FUNC"
