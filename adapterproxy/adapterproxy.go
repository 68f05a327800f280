package adapterproxy

import (
	"errors"
	"fmt"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Loop is what an AdapterProxy needs from the net thread that owns it. Its methods are called on
// the loop goroutine.
type Loop interface {
	// Dial connects to a's endpoint off the loop and enrolls the connection with this loop, with
	// a as the connection's context. The outcome comes back on the loop as a.OnOpen or
	// a.DialFailed.
	Dial(a *AdapterProxy)
	// Dirty asks the loop to call a.Flush after the current batch of requests has been routed.
	Dirty(a *AdapterProxy)
	// Wheel is the loop's timing wheel for call deadlines.
	Wheel() *call.Wheel
	// Now is the loop's clock (call.Now), read once per batch.
	Now() int64
}

// Options are the settings of an AdapterProxy.
type Options struct {
	MaxPacketSize  int           // largest reply frame accepted; larger closes the connection
	ConnectTimeout time.Duration // limit for one dial
	Log            *zap.Logger
}

type connState uint8

const (
	stateIdle       connState = iota // no connection; the next Send dials (after backoff)
	stateConnecting                  // a dial is under way
	stateConnected
)

// AdapterProxy is one endpoint's connection on one net thread.
type AdapterProxy struct {
	// Immutable after New.
	ep   endpoint.Endpoint
	addr string
	loop Loop
	opts Options
	log  *zap.Logger

	// Owned by the loop goroutine.
	state     connState
	conn      gnet.Conn
	pending   map[int32]*call.Call // calls waiting for a reply, by request id
	oneway    []*call.Call         // one-way calls whose frames are in wbuf, completed once written
	wbuf      []byte               // encoded requests not yet written
	dirty     bool                 // registered with the loop for a Flush
	dialFails int                  // consecutive failed dials
	retryAt   int64                // no dial before this (call.Now clock) after failures
	lastErr   error                // why the last dial failed
	resp      codec.ResponsePacket // scratch for decoding replies
	stats     Stats
}

// Stats counts what happened on an AdapterProxy. Read it on the loop goroutine.
type Stats struct {
	Sent       uint64 // requests written (one-way included)
	Replies    uint64 // replies matched to a pending call
	Late       uint64 // replies for no pending call (timed out, abandoned, or unknown id)
	Timeouts   uint64 // calls expired waiting for a reply
	ConnFails  uint64 // dials that failed
	ConnLosses uint64 // established connections that closed
}

// New returns an AdapterProxy for ep owned by loop. It does not connect until the first Send.
func New(ep endpoint.Endpoint, loop Loop, opts Options) *AdapterProxy {
	if opts.MaxPacketSize <= 0 {
		opts.MaxPacketSize = codec.DefaultMaxPacketSize
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	addr := ep.Addr()
	return &AdapterProxy{
		ep:      ep,
		addr:    addr,
		loop:    loop,
		opts:    opts,
		log:     opts.Log.With(zap.String("endpoint", addr)),
		pending: make(map[int32]*call.Call),
	}
}

// Endpoint returns the endpoint this proxy connects to. Safe for concurrent use.
func (a *AdapterProxy) Endpoint() endpoint.Endpoint { return a.ep }

// Addr returns the endpoint's host:port. Safe for concurrent use.
func (a *AdapterProxy) Addr() string { return a.addr }

// ConnectTimeout returns the dial limit. Safe for concurrent use.
func (a *AdapterProxy) ConnectTimeout() time.Duration { return a.opts.ConnectTimeout }

// Stats returns the counters. Must be called on the loop goroutine.
func (a *AdapterProxy) Stats() Stats { return a.stats }

// Pending returns the number of calls waiting for a reply. Must be called on the loop goroutine.
func (a *AdapterProxy) Pending() int { return len(a.pending) }

// Active reports whether the balancer should choose this endpoint now: it is connected or
// connecting, or its reconnect backoff has run out. Must be called on the loop goroutine.
func (a *AdapterProxy) Active(now int64) bool {
	return a.state != stateIdle || now >= a.retryAt
}

// Send queues c's frame for the next Flush and tracks c until its reply, its deadline, or the
// loss of the connection, whichever comes first; it connects first if needed. Must be called on
// the loop goroutine.
func (a *AdapterProxy) Send(c *call.Call) {
	if a.state == stateIdle {
		if now := a.loop.Now(); now < a.retryAt {
			c.Complete(&call.ConnError{Addr: a.addr, Cause: fmt.Errorf("reconnect backoff after: %w", a.lastErr)})
			return
		}
		a.state = stateConnecting
		a.loop.Dial(a)
	}
	c.Owner = a
	a.stats.Sent++
	if c.Oneway {
		a.oneway = append(a.oneway, c)
	} else {
		a.pending[c.ID] = c
	}
	if c.Deadline != 0 {
		a.loop.Wheel().Add(c)
	}
	a.wbuf = append(a.wbuf, c.Frame...)
	if a.state == stateConnected && !a.dirty {
		a.dirty = true
		a.loop.Dirty(a)
	}
}

// Flush writes the queued requests with one write. One-way calls complete once their bytes are
// handed to the connection. Must be called on the loop goroutine.
func (a *AdapterProxy) Flush() {
	a.dirty = false
	if a.state != stateConnected || len(a.wbuf) == 0 {
		return
	}
	conn := a.conn
	if _, err := conn.Write(a.wbuf); err != nil {
		// gnet has usually run OnClose inside Write already; make sure the calls are failed.
		if a.conn == conn {
			a.closed(err)
		}
		return
	}
	a.wbuf = a.wbuf[:0]
	a.completeOneway(nil)
}

// Expire ends c, whose deadline passed, with call.ErrTimeout. Called by the timing wheel on the
// loop goroutine.
func (a *AdapterProxy) Expire(c *call.Call) {
	if c.Oneway {
		a.removeOneway(c)
	} else {
		delete(a.pending, c.ID)
	}
	a.stats.Timeouts++
	c.Complete(call.ErrTimeout)
}

// FailAll ends every call tracked here with err and drops unsent bytes. Must be called on the
// loop goroutine.
func (a *AdapterProxy) FailAll(err error) {
	a.wbuf = a.wbuf[:0]
	w := a.loop.Wheel()
	for id, c := range a.pending {
		delete(a.pending, id)
		w.Remove(c)
		c.Complete(err)
	}
	a.completeOneway(err)
}

func (a *AdapterProxy) completeOneway(err error) {
	if len(a.oneway) == 0 {
		return
	}
	w := a.loop.Wheel()
	for i, c := range a.oneway {
		a.oneway[i] = nil
		w.Remove(c)
		c.Complete(err)
	}
	a.oneway = a.oneway[:0]
}

func (a *AdapterProxy) removeOneway(c *call.Call) {
	for i, o := range a.oneway {
		if o == c {
			copy(a.oneway[i:], a.oneway[i+1:])
			a.oneway[len(a.oneway)-1] = nil
			a.oneway = a.oneway[:len(a.oneway)-1]
			return
		}
	}
}

// errClosedLocally is the cause recorded when a connection was closed by this side.
var errClosedLocally = errors.New("connection closed")
