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
	// NextID returns a request id unique on this loop.
	NextID() int32
}

// Options are the settings of an AdapterProxy.
type Options struct {
	MaxPacketSize  int           // largest reply frame accepted; larger closes the connection
	ConnectTimeout time.Duration // limit for one dial
	// SendBufferLimit bounds the bytes a connection may hold unsent (the server is not reading):
	// beyond it new calls fail at once with ErrQueueFull. 0 means 32 MiB or 4 max packets,
	// whichever is larger.
	SendBufferLimit int
	Health          Health // when the endpoint is taken out of rotation
	// KeepAlive, when positive, sends tars_ping on a connection idle that long, and closes a
	// connection whose ping is not answered within KeepAlive: a peer that vanished silently is
	// noticed. When 0, a connection idle for longer than the endpoint's -t is closed.
	KeepAlive time.Duration
	Log       *zap.Logger
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
	ep      endpoint.Endpoint
	addr    string
	servant string
	loop    Loop
	opts    Options
	log     *zap.Logger

	// Owned by the loop goroutine.
	state     connState
	conn      gnet.Conn
	pending   map[int32]*call.Call // two-way calls sent or queued, by request id
	unsent    []*call.Call         // calls (two-way and one-way) not written yet, in order
	wbuf      []byte               // scratch for writing a batch
	scratch   []*call.Call         // scratch for failing or retrying calls
	written   []*call.Call         // scratch for the one-way calls of a written batch
	dirty     bool                 // registered with the loop for a Flush
	dialFails int                  // consecutive failed dials (or connections closed before a reply)
	proven    bool                 // the current connection has delivered a reply
	retryAt   int64                // no dial before this (call.Now clock) after failures
	lastErr   error                // why the last dial failed
	lastWarn  int64                // rate limit of warnings
	lastIO    int64                // last write or read on the connection
	ping      *call.Call           // the keepalive ping in flight, if any
	resp      codec.ResponsePacket // scratch for decoding replies
	health    health
	stats     Stats
}

// Stats counts what happened on an AdapterProxy. Read it on the loop goroutine.
type Stats struct {
	Sent        uint64 // calls handed to this endpoint (one-way included)
	Replies     uint64 // replies matched to a pending call
	Late        uint64 // replies for no pending call (timed out, abandoned, or unknown id): dropped
	Timeouts    uint64 // calls expired waiting for a reply
	ConnFails   uint64 // dials that failed
	ConnLosses  uint64 // established connections that closed
	Deactivated uint64 // times the health rules took the endpoint out of rotation
}

// New returns the AdapterProxy of servant's endpoint ep, owned by loop. It does not connect
// until the first Send.
func New(ep endpoint.Endpoint, servant string, loop Loop, opts Options) *AdapterProxy {
	if opts.MaxPacketSize <= 0 {
		opts.MaxPacketSize = codec.DefaultMaxPacketSize
	}
	if opts.SendBufferLimit <= 0 {
		opts.SendBufferLimit = max(32<<20, 4*opts.MaxPacketSize)
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	addr := ep.Addr()
	return &AdapterProxy{
		ep:      ep,
		addr:    addr,
		servant: servant,
		loop:    loop,
		opts:    opts,
		log:     opts.Log.With(zap.String("endpoint", addr)),
		pending: make(map[int32]*call.Call),
		health:  health{policy: opts.Health},
	}
}

// Endpoint returns the endpoint this proxy connects to. Safe for concurrent use.
func (a *AdapterProxy) Endpoint() endpoint.Endpoint { return a.ep }

// Addr returns the endpoint's host:port. Safe for concurrent use.
func (a *AdapterProxy) Addr() string { return a.addr }

// ConnectTimeout returns the dial limit. Safe for concurrent use.
func (a *AdapterProxy) ConnectTimeout() time.Duration { return a.opts.ConnectTimeout }

// Stats returns the counters. Must be called on the loop goroutine.
func (a *AdapterProxy) Stats() Stats {
	s := a.stats
	s.Deactivated = a.health.deactivated
	return s
}

// Pending returns the number of two-way calls waiting for a reply. Must be called on the loop
// goroutine.
func (a *AdapterProxy) Pending() int { return len(a.pending) }

// Active reports whether the balancer should choose this endpoint now: the health rules have not
// taken it out of rotation (or a probe is due), and no reconnect backoff is running. Must be
// called on the loop goroutine.
func (a *AdapterProxy) Active(now int64) bool {
	return a.health.available(now) && (a.state != stateIdle || now >= a.retryAt)
}

// Send queues c for the next Flush and tracks it until its reply, its deadline, or the loss of
// the connection, whichever comes first; it connects first if needed. Must be called on the loop
// goroutine.
func (a *AdapterProxy) Send(c *call.Call) {
	now := a.loop.Now()
	switch a.state {
	case stateIdle:
		if now < a.retryAt {
			a.loop.Wheel().Remove(c)
			c.Dest.Retry(c, &call.ConnError{Addr: a.addr, Cause: fmt.Errorf("not reconnecting yet after: %w", a.lastErr)})
			return
		}
		a.state = stateConnecting
		a.loop.Dial(a)
	case stateConnected:
		if n := a.conn.OutboundBuffered(); n > a.opts.SendBufferLimit {
			a.loop.Wheel().Remove(c)
			c.Complete(fmt.Errorf("%w: %s is not reading, %d bytes wait to be sent", call.ErrQueueFull, a.addr, n))
			return
		}
	}
	a.health.picked(now)
	c.Owner = a
	a.stats.Sent++
	if !c.Oneway {
		a.pending[c.ID] = c
	}
	if c.Deadline != 0 {
		a.loop.Wheel().Add(c)
	}
	c.Unsent = true
	a.unsent = append(a.unsent, c)
	if a.state == stateConnected && !a.dirty {
		a.dirty = true
		a.loop.Dirty(a)
	}
}

// maxBatch bounds the bytes gathered for one write.
const maxBatch = 256 << 10

// Flush writes the queued calls, gathering them into as few writes as possible (one per batch
// up to maxBatch bytes). One-way calls complete once their bytes are handed to the connection.
// Must be called on the loop goroutine.
func (a *AdapterProxy) Flush() {
	a.dirty = false
	for a.state == stateConnected && len(a.unsent) > 0 {
		// Gather a batch. A single call is written from its own buffer, without a copy.
		n := 0
		var data []byte
		if len(a.unsent) == 1 || len(a.unsent[0].Frame) >= maxBatch {
			data, n = a.unsent[0].Frame, 1
		} else {
			a.wbuf = a.wbuf[:0]
			for n < len(a.unsent) && len(a.wbuf)+len(a.unsent[n].Frame) <= maxBatch {
				a.wbuf = append(a.wbuf, a.unsent[n].Frame...)
				n++
			}
			data = a.wbuf
		}
		conn := a.conn
		a.lastIO = a.loop.Now()
		if _, err := conn.Write(data); err != nil {
			// gnet wrote nothing of data (a failed write is its first syscall) and has usually
			// run OnClose already, which retried or failed every unsent call.
			if a.conn == conn {
				a.closed(err)
			}
			return
		}
		// Take the written calls out of unsent before completing any of them, keeping the rest
		// at the front of the same array (the next Send appends without allocating).
		written := a.written[:0]
		for _, c := range a.unsent[:n] {
			c.Unsent = false
			if c.Oneway {
				written = append(written, c)
			}
		}
		left := copy(a.unsent, a.unsent[n:])
		clear(a.unsent[left:])
		a.unsent = a.unsent[:left]
		w := a.loop.Wheel()
		for i, c := range written {
			written[i] = nil
			w.Remove(c)
			c.Complete(nil)
		}
		a.written = written[:0]
	}
	if len(a.unsent) == 0 && cap(a.unsent) > 4096 {
		a.unsent = nil
	}
	if cap(a.wbuf) > 4*maxBatch {
		a.wbuf = nil
	}
}

// Expire ends c, whose deadline passed, with call.ErrTimeout. Called by the timing wheel on the
// loop goroutine.
func (a *AdapterProxy) Expire(c *call.Call) {
	if c.Unsent {
		a.removeUnsent(c)
	}
	if !c.Oneway {
		delete(a.pending, c.ID)
	}
	a.stats.Timeouts++
	a.health.fail(a.loop.Now())
	if c == a.ping {
		a.ping = nil
		if a.state == stateConnected {
			// The peer did not answer a ping within the keepalive interval: the connection is
			// dead though no error said so. Closing it fails its calls now.
			a.warn("keepalive ping unanswered, closing connection")
			_ = a.conn.Close()
		}
	}
	c.Complete(call.ErrTimeout)
}

// FailAll ends every call tracked here with err. Must be called on the loop goroutine.
func (a *AdapterProxy) FailAll(err error) {
	a.drop(err, false)
}

// drop ends every tracked call: calls never written are retried elsewhere when retry is set,
// all others complete with err.
func (a *AdapterProxy) drop(err error, retry bool) {
	a.ping = nil // completed below with the rest
	w := a.loop.Wheel()
	fail := a.scratch[:0]
	for _, c := range a.unsent {
		c.Unsent = false
		if !c.Oneway {
			delete(a.pending, c.ID)
		}
		w.Remove(c)
		fail = append(fail, c)
	}
	unsent := len(fail)
	clear(a.unsent)
	a.unsent = a.unsent[:0]
	for id, c := range a.pending {
		delete(a.pending, id)
		w.Remove(c)
		fail = append(fail, c)
	}
	for i, c := range fail {
		fail[i] = nil
		if retry && i < unsent {
			c.Dest.Retry(c, err)
		} else {
			c.Complete(err)
		}
	}
	a.scratch = fail[:0]
}

func (a *AdapterProxy) removeUnsent(c *call.Call) {
	for i, o := range a.unsent {
		if o == c {
			copy(a.unsent[i:], a.unsent[i+1:])
			a.unsent[len(a.unsent)-1] = nil
			a.unsent = a.unsent[:len(a.unsent)-1]
			c.Unsent = false
			return
		}
	}
}

// warn logs at warn level at most once a second per endpoint.
func (a *AdapterProxy) warn(msg string, fields ...zap.Field) {
	now := a.loop.Now()
	if now-a.lastWarn < int64(time.Second) && a.lastWarn != 0 {
		a.log.Debug(msg, fields...)
		return
	}
	a.lastWarn = now
	a.log.Warn(msg, fields...)
}

// errClosedLocally is the cause recorded when a connection was closed by this side.
var errClosedLocally = errors.New("connection closed")
