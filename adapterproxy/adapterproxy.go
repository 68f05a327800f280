package adapterproxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/datagram"
	"github.com/tarscomm/tarscomm/internal/inbound"
	"github.com/tarscomm/tarscomm/internal/lograte"
	"github.com/tarscomm/tarscomm/stats"
)

// Loop is what an AdapterProxy needs from the net thread that owns it. Its methods are called on
// the loop goroutine.
type Loop interface {
	// Dial connects to a's endpoint off the loop and enrolls the connection with this loop, with
	// Dialed{a, gen} as the connection's context. The outcome comes back on the loop as
	// a.Opened(c, gen) or a.DialFailed(gen, err).
	Dial(a *AdapterProxy, gen uint32)
	// Dirty asks the loop to call a.Flush after the current batch of requests has been routed.
	Dirty(a *AdapterProxy)
	// Resume asks the loop to call a.Flush on its next turn, and to make sure there is one: a
	// flush that used up its time budget continues there, after the loop has served other
	// connections.
	Resume(a *AdapterProxy)
	// Go runs fn on a goroutine of its own that Close waits for; ctx ends when the loop closes.
	Go(fn func(ctx context.Context))
	// Post runs fn on the loop goroutine soon (dropped once the loop has stopped).
	Post(fn func())
	// Recorder is the loop's call counter, nil when stats are off. The pointer may be read off
	// the loop; the recorder itself is used on the loop only.
	Recorder() *stats.Recorder
	// Wheel is the loop's timing wheel for call deadlines.
	Wheel() *call.Wheel
	// Now is the loop's clock (call.Now), read once per batch.
	Now() int64
	// Borrowed reports whether a caller goroutine runs the loop side just now (netthread's
	// direct path) instead of the loop: gnet's connection methods must not be called, and a
	// Flush writes to the socket itself or leaves the work to the loop (direct.go).
	Borrowed() bool
	// Batch is the buffer in which a Flush on the loop gathers several frames for one write. The
	// loop lends it to one Flush at a time, and the write copies what the socket does not take,
	// so a net thread needs one, not one per connection (which each held up to 1 MiB for good
	// after a burst).
	Batch() *[]byte
}

// Dialed is the context of a connection a dial enrolls, until Opened attaches it: it names the
// dial, so that a connection from a dial given up on is closed instead of attached.
type Dialed struct {
	A   *AdapterProxy
	Gen uint32
}

// Options are the settings of an AdapterProxy.
type Options struct {
	MaxPacketSize  int           // largest reply frame accepted (larger closes the connection) and request sent (larger fails)
	ConnectTimeout time.Duration // limit for one dial
	// SendBufferLimit bounds the bytes a connection may hold unsent: calls queued while it
	// connects, calls routed but not flushed, and bytes gnet could not write yet (the server is
	// not reading). Beyond it new calls fail at once with ErrQueueFull. 0 means 32 MiB or 4 max
	// packets, whichever is larger.
	SendBufferLimit int
	// FlushBudget bounds the time one Flush may hold the loop; the rest of a large backlog is
	// written on the loop's next turns. 0 means 10ms.
	FlushBudget time.Duration
	Health      Health // when the endpoint is taken out of rotation
	// KeepAlive, when positive, sends tars_ping on a connection that made no progress for that
	// long (progress.go: writes the socket takes at once are none), and closes it when the ping
	// is not answered within KeepAlive and the connection made no progress meanwhile: a peer that
	// vanished silently is noticed. When 0, a connection idle for longer than the endpoint's -t
	// is closed.
	KeepAlive time.Duration
	Log       *zap.Logger
	// Warnings limits the warnings about an endpoint to one a second across every AdapterProxy
	// given the same (a Communicator's net threads and connections), keyed by address; nil: each
	// its own.
	Warnings *lograte.Limiter
	Breaker  Breaker // the circuit breaker (breaker.go); zero: none
	// Push receives the server's pushes and the connection's open and close (push.go); nil:
	// pushes are logged and dropped.
	Push PushSink
	// Short makes the connection a short one (short.go): closed as soon as it holds no call,
	// and dialled again by the next.
	Short bool
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
	udp     bool // a udp endpoint: one datagram per call (udp.go)

	// Owned by the loop goroutine.
	state      connState
	conn       gnet.Conn
	dialGen    uint32               // numbers dials: only the newest one's outcome counts
	dialStart  int64                // when the current dial began
	calls      callTable            // two-way calls sent or queued, by request id (pending.go)
	q          sendq                // calls (two-way and one-way) not written yet, in order
	in         inbound.Assembler    // reply frames from the connection's bytes
	scratch    []*call.Call         // scratch for failing or retrying calls
	written    []*call.Call         // scratch for the calls of a written batch
	dirty      bool                 // registered with the loop for a Flush
	big        *bigwrite.Writer     // a writer goroutine finishes a large frame: write nothing else
	fd         int                  // the plain TCP connection's socket for direct writes, -1 without one (direct.go)
	gnetQueued int                  // bytes in gnet's outbound buffer when the loop last looked: set after every write through gnet (direct.go)
	outLeft    int64                // bytes of ended calls not yet in the socket when a close last looked (sending)
	outMovedAt int64                // when that count last changed
	tail       []byte               // the rest of a frame a direct write left: the loop writes it first
	dialFails  int                  // consecutive failed dials (or connections reset before use)
	retired    bool                 // its endpoint left the list (Retire): no ping, no new dial
	reconnect  bool                 // the server asked to move off the connection (drain.go)
	drains     []*drainer           // connections moved off, still read for their calls' replies
	draining   bool                 // a drainer is reading: a push read now comes on a connection reported closed
	proven     bool                 // the current connection has delivered a reply
	heard      bool                 // the current connection has received a byte
	retryAt    int64                // no dial before this (call.Now clock) after failures
	lastErr    error                // why the last dial failed
	warnClock  *lograte.Clock       // the endpoint's warnings (Options.Warnings)
	openedAt   int64                // when the current connection opened
	unheard    int                  // one-way-only connections closed in a row by the peer soon after opening, unheard (closed)
	lastIO     int64                // last write or read on the connection
	lastRead   int64                // last read on the connection
	handed     int64                // bytes handed to the connection (gnet or the big writer)
	taken      int64                // bytes of those the socket had taken at the last sample
	waiting    int64                // bytes not yet taken by the socket at the last sample
	lastMoved  int64                // last progress: bytes read, or waiting bytes taken (progress.go)
	pingSent   int64                // when the ping in flight was sent
	pingID     int32                // the request id of ping: a recycled Call is never the ping
	probeAt    int64                // while inactive: when the next probe (dial + ping) is due
	probeEvery int64                // while inactive: the wait before the last probe (keepalive.go); 0 once active
	probeSince int64                // while inactive: when its first probe went
	ping       *call.Call           // the keepalive or probe ping in flight, if any
	pingProbe  bool                 // ping is a health probe: unanswered, it replaces the connection (conn.go)
	resp       codec.ResponsePacket // scratch for decoding replies
	health     health
	lat        latency // peak-EWMA reply latency (latency.go)
	guard      guard   // circuit breaker and overload backoff (breaker.go)
	stats      Stats
	rec        *stats.EndpointRecorder // this endpoint's counters in the loop's recorder (lazy)
	recOn      bool                    // the loop records calls
}

// Stats counts what happened on an AdapterProxy. Read it on the loop goroutine.
type Stats struct {
	Sent        uint64 // calls handed to this endpoint (one-way included)
	Replies     uint64 // replies matched to a pending call
	Late        uint64 // replies for no pending call (timed out, abandoned, or unknown id): dropped
	Timeouts    uint64 // calls expired waiting for a reply
	Dropped     uint64 // calls abandoned by their caller before they were written: never sent
	StopRefused uint64 // calls its server refused unrun as it was stopping (each moves elsewhere once)
	ConnFails   uint64 // dials that failed
	ConnLosses  uint64 // established connections that closed
	Deactivated uint64 // times the health rules took the endpoint out of rotation
	Writes      uint64 // writes to the connection
	BytesOut    uint64 // bytes written
	BytesIn     uint64 // bytes of the reply frames read
	Pushes      uint64 // packets the server pushed (request id 0)
	// PushesDropped counts pushes nobody took (no push callback, or its queue refused them),
	// and those read on a connection moved off (drain.go), whose close the sink was told.
	PushesDropped uint64
	// BadDatagrams counts datagrams of a udp endpoint dropped because they were not exactly one
	// decodable reply frame.
	BadDatagrams uint64
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
	if opts.FlushBudget <= 0 {
		opts.FlushBudget = 10 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	addr := ep.Addr()
	clock := new(lograte.Clock)
	if opts.Warnings != nil {
		clock = opts.Warnings.Clock(addr)
	}
	return &AdapterProxy{
		warnClock: clock,
		ep:        ep,
		addr:      addr,
		servant:   servant,
		loop:      loop,
		opts:      opts,
		log:       opts.Log.With(zap.String("servant", servant), zap.String("endpoint", addr)),
		calls:     newCallTable(),
		in:        inbound.Assembler{Max: opts.MaxPacketSize, Head: responseHead},
		health:    health{policy: opts.Health},
		fd:        -1,
		recOn:     loop.Recorder() != nil,
		udp:       ep.Proto == endpoint.UDP,
	}
}

// Endpoint returns the endpoint this proxy connects to. Safe for concurrent use.
func (a *AdapterProxy) Endpoint() endpoint.Endpoint { return a.ep }

// Servant returns the object name of the servant this proxy calls. Safe for concurrent use.
func (a *AdapterProxy) Servant() string { return a.servant }

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
func (a *AdapterProxy) Pending() int { return a.calls.len() }

// Holds reports whether c is the adapter's current connection (Opened took it, and nothing has
// closed it since). Loop only.
func (a *AdapterProxy) Holds(c gnet.Conn) bool { return c != nil && a.conn == c }

// Active reports whether the balancer should choose this endpoint now: the health rules have not
// taken it out of rotation (or a probe is due), and no reconnect backoff is running. Must be
// called on the loop goroutine.
func (a *AdapterProxy) Active(now int64) bool {
	return a.health.available(now) && (a.state != stateIdle || now >= a.retryAt) && a.guard.allow(now)
}

// Live reports whether a call sent now would wait for no new dial: the connection is open or
// its dial is under way, and the proxy is Active. An idle one (never dialled, closed, or after a
// failed dial) is not live. Must be called on the loop goroutine.
func (a *AdapterProxy) Live(now int64) bool {
	return a.state != stateIdle && a.Active(now)
}

// Send queues c for the next Flush and tracks it until its reply, its deadline, or the loss of
// the connection, whichever comes first; it connects first if needed. Must be called on the loop
// goroutine.
func (a *AdapterProxy) Send(c *call.Call) { a.send(c) }

// send is Send, reporting whether c was queued (false: it was completed or retried elsewhere
// already, and may have been recycled).
func (a *AdapterProxy) send(c *call.Call) bool {
	c.SetAddr(&a.addr)
	if a.recOn {
		c.Rec = a // a refusal below is counted under this endpoint, which its error names
	}
	if a.udp && len(c.Frame) > datagram.MaxSize {
		return a.refuseDatagram(c)
	}
	now := a.loop.Now()
	if len(c.Frame) > a.opts.MaxPacketSize {
		a.loop.Wheel().Remove(c)
		c.Complete(fmt.Errorf("%w: %d bytes to %s (max-packet-size %d)", call.ErrRequestTooLarge, len(c.Frame), a.addr, a.opts.MaxPacketSize))
		return false
	}
	queued := a.q.bytes
	switch a.state {
	case stateIdle:
		if now < a.retryAt {
			a.loop.Wheel().Remove(c)
			c.Dest.Retry(c, &call.ConnError{Addr: a.addr, Cause: fmt.Errorf("not reconnecting yet after: %w", a.lastErr)})
			return false
		}
		a.dial(now)
	case stateConnected:
		queued += a.outBuffered() + int(a.bigLeft())
	}
	if queued > a.opts.SendBufferLimit {
		a.loop.Wheel().Remove(c)
		why := "is not reading"
		if a.state != stateConnected {
			why = "is still connecting"
		}
		c.Complete(fmt.Errorf("%w: %s %s, %d bytes wait to be sent (send-buffer-limit %d)", call.ErrQueueFull, a.addr, why, queued, a.opts.SendBufferLimit))
		return false
	}
	if !a.calls.assign(c) {
		a.loop.Wheel().Remove(c)
		c.Complete(errNoIDRoom)
		return false
	}
	a.health.picked(now)
	if a.guard.open && !c.Oneway { // half-open: the call may be the breaker's probe
		// Not a ping (the health rules' probe) nor a one-way call (no outcome comes back: it
		// would hold the probe's place for probeWait and decide nothing).
		if _, own := c.Dest.(noRetry); !own {
			a.guard.picked(now, c.ID)
		}
	}
	c.Owner, c.SentAt = a, now
	a.stats.Sent++
	if !c.Oneway {
		a.calls.add(c)
	}
	if c.Deadline != 0 {
		a.loop.Wheel().Add(c)
	}
	a.q.push(c)
	if a.state == stateConnected && !a.dirty {
		a.dirty = true
		a.loop.Dirty(a)
	}
	return true
}

// dial starts a connection attempt.
func (a *AdapterProxy) dial(now int64) {
	a.state = stateConnecting
	a.dialGen++
	a.dialStart = now
	a.loop.Dial(a, a.dialGen)
}

// maxBatch bounds the bytes gathered for one write.
const maxBatch = 256 << 10

// Flush writes the queued calls, gathering them into as few writes as possible (one per batch
// up to maxBatch bytes; a large frame is written from its own buffer, without a copy). Calls
// whose caller gave up before they were written are dropped, not sent, and calls whose deadline
// passed before they could be written end with ErrTimeout, unsent. One-way calls complete
// once their bytes are handed to the connection. A Flush that runs longer than the flush budget
// stops and continues on the loop's next turn. Must be called on the loop goroutine.
func (a *AdapterProxy) Flush() {
	if a.loop.Borrowed() {
		a.flushDirect()
		return
	}
	a.dirty = false
	if a.udp {
		a.flushDatagrams()
		return
	}
	if !a.writeTail() {
		return
	}
	var start int64
	now := a.loop.Now()
	for batches := 0; a.state == stateConnected && a.q.live > 0 && a.big == nil; batches++ {
		if batches&15 == 15 && a.overBudget(&start) {
			return
		}
		if c := a.q.front(); c != nil && len(c.Frame) >= bigwrite.Min && !c.Abandoned() && !a.expiredUnsent(c, now) {
			c.Delayed(now)
			if a.writeBig(c) {
				continue
			}
		}
		// Gather a batch from the front of the queue, dropping abandoned calls. The calls stay
		// queued until the write succeeds: a failed write closes the connection, and the close
		// retries every queued call elsewhere, these included.
		batch, size := a.written[:0], 0
		for i := a.q.head; i < len(a.q.calls); i++ {
			c := a.q.calls[i]
			if c == nil {
				continue
			}
			if c.Abandoned() {
				a.abandon(c)
				continue
			}
			if a.expiredUnsent(c, now) {
				continue
			}
			if len(batch) > 0 && size+len(c.Frame) > maxBatch {
				break
			}
			// A call that waited in the queue (behind a large frame, a flush over its budget, a
			// direct write's tail) tells the server the time left now, not when it was encoded.
			c.Delayed(now)
			batch = append(batch, c)
			size += len(c.Frame)
			if size >= maxBatch {
				break
			}
		}
		if len(batch) == 0 {
			break
		}
		var data []byte
		if len(batch) == 1 {
			data = batch[0].Frame // a single call is written from its own buffer, without a copy
		} else {
			buf := a.loop.Batch()
			*buf = (*buf)[:0]
			for _, c := range batch {
				*buf = append(*buf, c.Frame...)
			}
			data = *buf
		}
		conn := a.conn
		a.lastIO = a.loop.Now()
		a.stats.Writes++
		a.stats.BytesOut += uint64(len(data))
		a.handed += int64(len(data))
		if _, err := conn.Write(data); err != nil {
			// gnet wrote nothing of data (a failed write is its first syscall) and has usually
			// run OnClose already, which retried or failed every queued call.
			clear(batch)
			a.written = batch[:0]
			if a.conn == conn {
				a.closed(err)
			}
			return
		}
		a.gnetQueued = conn.OutboundBuffered()
		// Take the written calls out of the queue before completing any of them.
		for range batch {
			a.q.front()
			a.q.pop()
		}
		for i, c := range batch {
			a.written1(c)
			batch[i] = nil
		}
		a.written = batch[:0]
	}
	if buf := a.loop.Batch(); cap(*buf) > 4*maxBatch {
		*buf = nil
	}
}

// overBudget reports whether the Flush that began at *start (0: not read yet) has used up its
// time budget; if so, it has the loop resume the Flush on its next turn.
func (a *AdapterProxy) overBudget(start *int64) bool {
	if *start == 0 {
		*start = a.loop.Now()
	}
	if call.Now()-*start <= int64(a.opts.FlushBudget) {
		return false
	}
	a.dirty = true
	a.loop.Resume(a)
	return true
}

// abandon drops c, queued but not written, whose caller gave up on it: it is never sent.
func (a *AdapterProxy) abandon(c *call.Call) {
	a.unqueue(c, nil) // an abandoned call is recycled, not delivered
}

// expiredUnsent ends c, queued but not written, with ErrTimeout if its deadline passed by now
// (in the connect backlog, in the net thread's queue, behind other frames), and reports whether
// it did: a call is never written for a caller that stopped waiting (the server would be told
// 1 ms left and run it all the same). It counts as a timeout, not against the endpoint's
// health: the server was never asked.
func (a *AdapterProxy) expiredUnsent(c *call.Call, now int64) bool {
	if c.Deadline == 0 || c.Deadline > now {
		return false
	}
	a.untrack(c)
	a.stats.Timeouts++
	c.Complete(call.ErrTimeout)
	return true
}

// unqueue ends c, queued but not written, with err: it is taken out of the queue, the pending
// table and the timing wheel, and counted as dropped.
func (a *AdapterProxy) unqueue(c *call.Call, err error) {
	a.untrack(c)
	a.stats.Dropped++
	c.Complete(err)
}

// untrack takes c, queued but not written, out of the queue, the pending table and the timing
// wheel (and the keepalive's ping, if it is that).
func (a *AdapterProxy) untrack(c *call.Call) {
	a.q.remove(c)
	if !c.Oneway {
		a.calls.remove(c)
	}
	a.loop.Wheel().Remove(c)
	if a.isPing(c) {
		a.ping = nil
	}
}

// Expire ends c, whose deadline passed, with call.ErrTimeout. Called by the timing wheel on the
// loop goroutine.
func (a *AdapterProxy) Expire(c *call.Call) {
	wasUnsent := c.Unsent
	if c.Unsent {
		a.q.remove(c)
	}
	if !c.Oneway {
		a.calls.remove(c)
	}
	a.stats.Timeouts++
	if !wasUnsent || a.state == stateConnected {
		// A call that expired in the connect backlog says nothing of the server's health:
		// the connect's own outcome does.
		a.health.fail(a.loop.Now())
		a.timedOut(c)
	}
	if a.isPing(c) {
		a.ping = nil
		if a.pingProbe {
			a.health.probeLost() // a later answer on this connection proves the server back (health.ok)
		}
		if a.state == stateConnected && !a.movedSince(a.pingSent) {
			// The peer did not answer a ping in time, sent nothing else meanwhile, and took
			// none of the bytes waiting for it: the connection is dead though no error said
			// so. (A ping queued behind a large request the peer is still reading, or behind
			// large replies that are still arriving, is late, not lost.)
			now := a.loop.Now()
			fields := []zap.Field{zap.Duration("since_ping", time.Duration(now-a.pingSent)), zap.Duration("since_read", time.Duration(now-a.lastRead)), zap.Duration("since_moved", time.Duration(now-a.lastMoved))}
			c.Complete(call.ErrTimeout)
			if a.pingProbe && a.udp {
				return // the endpoint stays inactive; the socket stays (replace)
			}
			if a.pingProbe && !a.retired {
				a.warn("health probe unanswered, replacing connection", fields...)
				a.replace(errProbeUnanswered)
			} else {
				a.warn("keepalive ping unanswered, closing connection", fields...)
				a.detach(errPingUnanswered)
			}
			return
		}
	}
	c.Complete(call.ErrTimeout)
}

// FailAll ends every call tracked here with err. Must be called on the loop goroutine.
func (a *AdapterProxy) FailAll(err error) {
	a.drop(err, false)
}

// drop ends every tracked call: calls never written are retried elsewhere when retry is set,
// all others complete with err. With retry (the connection failed, or a dial did), the calls
// written on a connection a drainer reads are left to it: they wait for their replies there
// (drain.go), whatever happens to the new connection; without (the proxy or its thread is
// closing), they end too.
func (a *AdapterProxy) drop(err error, retry bool) {
	a.ping = nil // completed below with the rest
	w := a.loop.Wheel()
	fail := a.q.drain(a.scratch[:0])
	for _, c := range fail {
		if !c.Oneway {
			a.calls.remove(c)
		}
		w.Remove(c)
	}
	unsent := len(fail)
	if retry && len(a.drains) > 0 {
		held := a.drainedCalls()
		a.calls.each(func(c *call.Call) {
			if !held[written{c, c.ID}] {
				fail = append(fail, c)
			}
		})
		for _, c := range fail[unsent:] {
			a.calls.remove(c)
		}
	} else {
		fail = a.calls.drain(fail)
	}
	for _, c := range fail[unsent:] {
		w.Remove(c)
	}
	for i, c := range fail {
		fail[i] = nil
		if retry && i < unsent && !c.Abandoned() {
			c.Dest.Retry(c, err)
		} else {
			c.Complete(err)
		}
	}
	a.scratch = keepCalls(fail)
}

// sweepAbandoned drops queued calls whose caller gave up, so that a connect backlog does not
// keep their frames until the connect ends. Run by Tick.
func (a *AdapterProxy) sweepAbandoned() {
	if a.q.live == 0 {
		return
	}
	a.q.each(func(c *call.Call) {
		if c.Abandoned() {
			a.abandon(c)
		}
	})
}

// warn logs at warn level at most once a second per endpoint (Options.Warnings), saying how many
// warnings about it were logged at debug level since the last.
func (a *AdapterProxy) warn(msg string, fields ...zap.Field) {
	ok, left := a.warnClock.Allow()
	if !ok {
		a.log.Debug(msg, fields...)
		return
	}
	if left > 0 {
		fields = append(fields, zap.Uint64("suppressed", left))
	}
	a.log.Warn(msg, fields...)
}

// Causes recorded when this side closes a connection.
var (
	errClosedLocally  = errors.New("connection closed")
	errIdle           = errors.New("idle connection closed")
	errPingUnanswered = errors.New("keepalive ping unanswered")
	// errProbeUnanswered closes the connection of an inactive endpoint whose health probe went
	// unanswered: replace dials a new one.
	errProbeUnanswered = errors.New("health probe unanswered")
)

// errNoIDRoom ends a call whose frame cannot take its request id in place (pending.go).
var errNoIDRoom = errors.New("tarscomm: request frame has no 4-byte request id to assign (encode it with codec.RequestIDUnassigned)")
