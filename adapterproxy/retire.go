package adapterproxy

import (
	"errors"
	"math"
	"time"
)

// errRetired is the close cause of a connection whose endpoint left its servant's list.
var errRetired = errors.New("endpoint left the servant's list")

// Retire is called, on the loop goroutine, for an endpoint that left its servant's list, and
// again on every chore tick until it returns true. The ObjectProxy sends it no new call; calls it
// holds (written and waiting for a reply, or queued while it connects) complete normally. Once it
// holds none, Retire closes the connection (a dial under way is given up: its connection is
// closed when it opens) and returns true; the caller then forgets the AdapterProxy. A
// connection still sending bytes of calls that have ended waits while they move (sending), as
// the idle and short-connection closes do. Its own ping (a keepalive or a health probe) is not
// waited for, and once retired it sends none and never dials again (Tick, expire, Opened): an
// endpoint that left is not probed back to life.
func (a *AdapterProxy) Retire() bool {
	a.retired = true
	own, ownQueued := 0, 0 // its ping's place among the calls held
	if a.ping != nil {
		own = 1
		if a.ping.Unsent {
			ownQueued = 1
		}
	}
	if a.calls.len() > own || a.q.live > ownQueued || a.sending(a.loop.Now(), sendStall) {
		return false
	}
	switch a.state {
	case stateConnected:
		a.detach(errRetired)
	case stateConnecting:
		a.dialGen++ // Opened closes the connection of the dial given up on
		a.state = stateIdle
	}
	a.drop(errRetired, false)   // the ping, if one is left
	a.tickDrains(math.MaxInt64) // connections moved off: no call of theirs is left either
	return true
}

// sending reports whether bytes of calls already ended (one-way calls, completed once handed on)
// are still on their way to the socket and were moving lately: the rest of a direct write
// (tail, which the loop's flush hands on later in the turn than the chores), a large frame its
// writer goroutine is writing (big), or bytes waiting in gnet's outbound buffer. Closing such a
// connection (idle, short or retired) would cut a frame reported sent, and the peer would read a
// truncated one; so a close waits for them while they move (looked at each time it is asked: on
// every chore tick). Bytes that have not moved for stall (a peer that stopped reading) do not
// hold it: they would wait forever. Bytes already in the kernel's socket buffer are not counted:
// they still go out after a close. Loop goroutine only.
func (a *AdapterProxy) sending(now, stall int64) bool {
	left := int64(len(a.tail)) + a.bigLeft()
	if a.state == stateConnected && a.conn != nil {
		left += int64(a.outBuffered())
	}
	if left == 0 {
		a.outLeft = 0
		return false
	}
	// Moving: fewer (or more) bytes left than at the last look, or the socket taking bytes
	// (progress.go's sample, which also sees the kernel's send queue drain to the peer).
	a.sample(now)
	if a.outLeft == 0 || left != a.outLeft || a.lastMoved > a.outMovedAt {
		a.outMovedAt = now
	}
	a.outLeft = left
	return now-a.outMovedAt < stall
}

// sendStall is how long a close waits for bytes of ended calls that stopped moving, when the
// connection has no idle timeout of its own to go by.
const sendStall = int64(10 * time.Second)
