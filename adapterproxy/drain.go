package adapterproxy

import (
	"errors"
	"math"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/inbound"
)

// A TarsGo server that restarts gracefully sends "_reconnect_" (codec.ReconnectDesc, request id
// 0) on each of its connections, then reads them no more: it answers the calls it read and
// closes each connection once they are answered, while a new process takes the listening
// socket. A call written to such a connection after the packet is never read. So the
// AdapterProxy moves off it at once (pushed notes the packet, OnTraffic moves when the read's
// frames are done): the connection goes to a drainer, which reads the replies of the calls
// written on it (they complete as any call, through the AdapterProxy's table), and the next call
// dials a new connection, without a health penalty for the move. The drainer closes the
// connection when the server does, or once the latest deadline of the calls written on it has
// passed (Tick). When the server closes it, the calls written on it that are still waiting
// end then with a connection error (no reply can come for them), and the endpoint's health
// counts one failure; when Tick does, they end with ErrTimeout.

// errReconnect is the close cause the AdapterProxy gives when it moves off a connection.
var errReconnect = errors.New("the server asked to reconnect (_reconnect_)")

// Reader handles the events of a connection whose context it is: the AdapterProxy's own, or
// one it moved off (a drainer). The net thread hands them on.
type Reader interface {
	OnTraffic(c gnet.Conn) gnet.Action
	OnClose(c gnet.Conn, err error)
}

// drainer reads a connection its AdapterProxy moved off.
type drainer struct {
	a     *AdapterProxy
	conn  gnet.Conn
	in    inbound.Assembler // the connection's, moved from the AdapterProxy with its state
	until int64             // the latest deadline of calls (0: none)
	calls []written         // the calls written on the connection, waiting at the move
	ended bool              // tickDrains closed it: the calls left are past their deadlines
}

// written names a call waiting for its reply on a drained connection: the call and its request
// id, which tell whether the table still holds that call (a recycled Call has another id).
type written struct {
	c  *call.Call
	id int32
}

// moveOff hands the connection c (a.conn, whose read's frames are all done) to a drainer and
// leaves the AdapterProxy idle: queued calls go on a new connection at once, others dial one.
// cause is why (errReconnect, or errProbeUnanswered from replace).
func (a *AdapterProxy) moveOff(c gnet.Conn, cause error) {
	d := &drainer{a: a, conn: c, in: a.in}
	a.in = inbound.Assembler{Max: d.in.Max, Budget: d.in.Budget, Head: d.in.Head} // d owns the old one's buffers
	var earlier map[written]bool                                                  // the calls earlier drainers hold: written on their connections
	for _, o := range a.drains {
		for _, w := range o.calls {
			if earlier == nil {
				earlier = make(map[written]bool)
			}
			earlier[w] = true
		}
	}
	a.calls.each(func(c *call.Call) {
		if w := (written{c, c.ID}); !c.Unsent && !earlier[w] { // queued calls go on the new connection
			d.calls = append(d.calls, w)
			if c.Deadline == 0 { // a call without one never ends by itself
				d.until = math.MaxInt64
			} else {
				d.until = max(d.until, c.Deadline)
			}
		}
	})
	a.forget(cause)
	c.SetContext(d)
	a.drains = append(a.drains, d)
	msg := "server asked to reconnect: next calls go on a new connection"
	if cause != errReconnect {
		msg = "moved off the connection: next calls go on a new one"
	}
	a.log.Debug(msg, zap.Error(cause), zap.Int("conns", len(a.drains)))
	if a.q.live > 0 {
		a.dial(a.loop.Now())
	}
}

// OnTraffic completes the calls whose replies arrive on the drained connection.
func (d *drainer) OnTraffic(c gnet.Conn) gnet.Action {
	a := d.a
	asked := a.reconnect // a packet on this connection asks nothing of the new one
	a.draining = true    // and its pushes are not the new one's (pushed)
	defer func() { a.reconnect, a.draining = asked, false }()
	for {
		frame, owned, err := d.in.Next(c)
		if err == nil && frame != nil {
			err = a.reply(frame, owned)
		}
		if a.oversized(err) {
			continue
		}
		if err != nil {
			a.warn("bad reply on a connection the server asked to leave, closing it", zap.Error(err))
			_, _ = c.Discard(-1)
			return gnet.Close
		}
		if frame == nil {
			return gnet.None
		}
	}
}

// OnClose forgets the drained connection and ends the calls written on it that are still
// waiting: with a connection error when the server closed it (it answered what it meant to),
// with ErrTimeout when tickDrains did (their deadlines have passed). None is retried: the server
// may have run it.
func (d *drainer) OnClose(_ gnet.Conn, err error) {
	a := d.a
	d.in.Reset()
	a.drains = deleteDrainer(a.drains, d)
	var cause error = call.ErrTimeout
	if !d.ended {
		if err == nil {
			err = errClosedLocally
		}
		cause = &call.ConnError{Addr: a.addr, Cause: err}
	}
	w := a.loop.Wheel()
	failed := false
	for _, p := range d.calls {
		if !a.calls.holds(p.c, p.id) {
			continue // answered, expired or ended otherwise
		}
		a.calls.remove(p.c)
		w.Remove(p.c)
		if a.isPing(p.c) {
			a.ping = nil
		}
		failed = true
		p.c.Complete(cause)
	}
	d.calls = nil
	if failed && !d.ended {
		a.health.fail(a.loop.Now())
	}
}

// drainedCalls returns the calls the drainers hold that are still waiting (a rare path: a
// connection failing while a drained one is read).
func (a *AdapterProxy) drainedCalls() map[written]bool {
	held := make(map[written]bool)
	for _, d := range a.drains {
		for _, w := range d.calls {
			if a.calls.holds(w.c, w.id) {
				held[w] = true
			}
		}
	}
	return held
}

// ownCalls returns the calls waiting for the current connection (queued or written on it): the
// table's, without those written on connections the drainers read.
func (a *AdapterProxy) ownCalls() int {
	n := a.calls.len()
	for _, d := range a.drains {
		for _, w := range d.calls {
			if a.calls.holds(w.c, w.id) {
				n--
			}
		}
	}
	return n
}

func deleteDrainer(ds []*drainer, d *drainer) []*drainer {
	for i, x := range ds {
		if x == d {
			ds[i] = ds[len(ds)-1]
			ds[len(ds)-1] = nil
			return ds[:len(ds)-1]
		}
	}
	return ds
}

// tickDrains closes the drained connections whose calls are all past their deadlines: a server
// that never closes one does not keep it for good.
func (a *AdapterProxy) tickDrains(now int64) {
	for _, d := range a.drains {
		if now >= d.until && d.conn != nil {
			d.ended = true
			_ = d.conn.Close() // OnClose removes it
			d.conn = nil
		}
	}
}
