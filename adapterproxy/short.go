package adapterproxy

import "errors"

// Short connections (Options.Short, a servant's short-connections): for a rare caller, a
// connection is opened for the calls at hand and closed once it holds none, instead of being
// kept for the next. It is closed from this side as soon as its last reply has been read (and,
// for one-way calls, which wait for no reply, on the next chore tick after they were written);
// the next call dials again. Such a close is not a lost connection: it costs no health and is
// not counted in ConnLosses. Calls sent while the connection is up share it, multiplexed as
// usual.

// errShort is the close cause of a short connection that finished its calls.
var errShort = errors.New("short connection: no call left")

// closeIfDone closes a short connection that holds no call: none waiting for its reply, none
// queued, no bytes of ended calls still moving to the socket (sending). It reports whether it
// closed it.
func (a *AdapterProxy) closeIfDone() bool {
	if a.state != stateConnected || a.udp || a.ownCalls() > 0 || a.q.live > 0 || a.sending(a.loop.Now(), sendStall) {
		return false
	}
	a.detach(errShort)
	return true
}
