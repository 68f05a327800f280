package adapterproxy

import "errors"

// errRetired is the close cause of a connection whose endpoint left its servant's list.
var errRetired = errors.New("endpoint left the servant's list")

// Retire is called, on the loop goroutine, for an endpoint that left its servant's list, and
// again on every chore tick until it returns true. The ObjectProxy sends it no new call; calls it
// holds (written and waiting for a reply, or queued while it connects) complete normally. Once it
// holds none, Retire closes the connection (a dial under way is given up: its connection is
// closed when it opens) and returns true; the caller then forgets the AdapterProxy. A
// connection still holding the rest of a direct write (a one-way call's, whose call has ended)
// waits for the loop to hand it on, as the idle and short-connection closes do: the chores that
// call Retire run early in the loop's turn, before the flush that writes it.
func (a *AdapterProxy) Retire() bool {
	if a.calls.len() > 0 || a.q.live > 0 || len(a.tail) > 0 {
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
