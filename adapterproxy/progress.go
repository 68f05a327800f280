package adapterproxy

import (
	"errors"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/sockq"
)

// Progress, the keepalive's notion of a live connection: a connection is alive while it makes
// progress in either direction. Bytes arriving are progress (OnTraffic), and so are bytes that
// arrived but wait in the kernel because the loop has not read them yet (FIONREAD): on a busy
// machine the ping's deadline may be swept in the same turn as its reply becomes readable, and
// a reply that is there is an answer. Bytes leaving are
// progress only when bytes that were waiting move on: out of gnet's outbound buffer or the big
// writer's rest into the socket, or out of the kernel's send queue to the peer (acknowledged,
// SIOCOUTQ; on loopback the kernel takes a whole large request at once, and only its send queue
// shows the peer reading it): a slow peer reading a large request at its own pace is alive,
// though it answers nothing until it has read it all. A write the socket takes at once is not
// progress (the kernel takes a ping whether or not anyone is there), so a connection that only
// sent a ping since, and heard nothing back, has made none: it is dead.
//
// The socket's intake is sampled, not reported: handed counts the bytes given to the
// connection, and what is not waiting of those the socket has taken. sample runs on every
// chore tick and whenever a ping expires, so a starved ticker only makes progress coarser,
// never invisible.

// sample records the socket's intake since the last sample: if bytes were waiting then and the
// socket took more since, the connection moved at now.
func (a *AdapterProxy) sample(now int64) {
	if a.state != stateConnected || a.conn == nil {
		return
	}
	waiting := int64(a.conn.OutboundBuffered()) + a.bigLeft()
	if fd := sockq.Fd(a.conn); fd >= 0 {
		waiting += sockq.Unsent(fd)
		if sockq.Unread(fd) > 0 {
			a.lastMoved = now
		}
	}
	taken := a.handed - waiting
	if taken > a.taken && a.waiting > 0 {
		a.lastMoved = now
	}
	a.taken, a.waiting = taken, waiting
}

// movedSince reports whether the connection made progress after t (sampling it first).
func (a *AdapterProxy) movedSince(t int64) bool {
	a.sample(a.loop.Now())
	return a.lastMoved > t
}

// isPing reports whether c is the ping in flight. The ping is known by its pointer and its
// request id: a Call recycled after the ping ended, and reused for a user's call, is never
// taken for it.
func (a *AdapterProxy) isPing(c *call.Call) bool {
	return a.ping != nil && c == a.ping && c.ID == a.pingID
}

// silentPeerError is why a connection failed that the peer closed without sending a single byte
// while calls waited: what a TLS server does with a client that does not speak TLS (it reads a
// TARS frame where a ClientHello should be, and hangs up without an alert), and what a server at
// its connection limit does with one connection too many (a tarscomm server's WithMaxConns,
// TarsCpp's maxconns).
type silentPeerError struct{ err error }

func (e *silentPeerError) Error() string {
	return e.err.Error() + " (the peer closed the connection without sending a byte: a server at its connection limit (maxconns) does that, " +
		"and a TLS server to a plain TCP client: if the endpoint speaks TLS, declare it ssl, not tcp)"
}

func (e *silentPeerError) Unwrap() error { return e.err }

// isLocalClose reports whether err is this side closing the connection.
func isLocalClose(err error) bool { return errors.Is(err, errClosedLocally) }
