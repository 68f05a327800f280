package adapterproxy

import "errors"

// errRetired is the close cause of a connection whose endpoint left its servant's list.
var errRetired = errors.New("endpoint left the servant's list")

// Retire is called, on the loop goroutine, for an endpoint that left its servant's list, and
// again on every chore tick until it returns true. The ObjectProxy sends it no new call; calls it
// holds (written and waiting for a reply, or queued while it connects) complete normally. Once it
// holds none, Retire closes the connection (a dial under way is given up: its connection is
// closed when it opens) and returns true; the caller then forgets the AdapterProxy. A
// connection still sending bytes of calls that have ended (sending) waits for them, as the idle
// and short-connection closes do.
func (a *AdapterProxy) Retire() bool {
	if a.calls.len() > 0 || a.q.live > 0 || a.sending() {
		return false
	}
	switch a.state {
	case stateConnected:
		a.detach(errRetired)
	case stateConnecting:
		a.dialGen++ // Opened closes the connection of the dial given up on
		a.state = stateIdle
	}
	return true
}

// sending reports whether bytes of calls already ended (one-way calls, completed once handed on)
// are still on their way to the socket: the rest of a direct write (tail, which the loop's flush
// hands on later in the turn than the chores), a large frame its writer goroutine is writing
// (big), or bytes waiting in gnet's outbound buffer. A connection that holds no call but is
// sending is not done: closing it (idle, short or retired) would cut a frame reported sent, and
// the peer would read a truncated one. Loop goroutine only.
func (a *AdapterProxy) sending() bool {
	return len(a.tail) > 0 || a.big != nil || (a.state == stateConnected && a.conn != nil && a.outBuffered() > 0)
}
