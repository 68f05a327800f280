package server

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/internal/bufpool"
	"github.com/tarscomm/tarscomm/internal/sockq"
)

// The limits that keep one client from exhausting the server (WithMaxConns, WithIdleTimeout,
// WithBacklog, WithMaxBacklog), TC_EpollServer's rules:
//
//   - maxconns is counted at accept (OnOpen, any loop): one atomic counter.
//   - The hard backlog cap is checked where replies are handed to a connection (send, and after
//     each request of a read in OnTraffic), on the connection's loop.
//   - The idle rule and the windowed backlog rule are checked by a sweep of each loop's
//     connections on that loop (EventLoop.Execute), started by gnet's ticker every tick. The
//     hot path only marks a connection active (a bool) and counts the bytes handed to it.

// backlogWindow is TarsCpp's window of the backlog rule; tests shorten Server.lim.window.
const backlogWindow = 5 * time.Second

// slowWindows is how many windows in a row a backlogged connection may send too little.
const slowWindows = 3

// errBacklog fails a send that left a connection more unsent bytes than WithMaxBacklog.
var errBacklog = errors.New("reply backlog over the cap")

// serverLimits is the Server's state of the limits.
type serverLimits struct {
	window time.Duration // of the backlog rule; set by New, tests shorten it before Start
	tick   time.Duration // between sweeps; set by Start; 0: no sweeps

	open    atomic.Int64 // connections counted against WithMaxConns
	refused atomic.Int64 // LimitStats
	idled   atomic.Int64
	slowed  atomic.Int64
	capped  atomic.Int64
	windows atomic.Int64 // backlog windows measured (tests look)

	queueTimeouts atomic.Int64 // requests not run: they waited too long for a worker (worker.go)
	queueFull     atomic.Int64 // requests refused: the worker queue was full (WithQueueCap, WithQueueBytes)
	acceptFails   atomic.Int64 // accepts that failed (accept.go)

	tickLoops []*loop // OnTick's scratch
}

// connLimits is a connection's state of the limits. Owned by its loop goroutine.
type connLimits struct {
	slot    int       // index in loop.conns
	active  bool      // bytes arrived (or it opened) since the last sweep
	quiet   time.Time // the sweep that last saw it active or busy
	seen    int64     // reply bytes sent by the last sweep (backlog's sent)
	handed  int64     // reply bytes handed to gnet or to a direct write: sent or buffered
	held    int       // reply bytes waiting in held behind a large-reply writer
	closing bool      // a limit closed it
	authBy  time.Time // WithAuth: when it must have authenticated (watch, or its TLS handshake's end)

	over  bool               // unsent bytes above WithBacklog's limit at the last sweep
	since time.Time          // start of the current window
	sent0 int64              // bytes sent at its start
	slow  int                // windows in a row that sent too little
	sent  [slowWindows]int64 // what they sent, for the log
}

// LimitStats counts the connections the limits refused or closed since Start, the requests
// WithFrameBudget had no room for, and those WithQueueTimeout did not run.
type LimitStats struct {
	Refused      int64 // accepted beyond WithMaxConns, closed at once
	Idle         int64 // closed by WithIdleTimeout
	Slow         int64 // closed by WithBacklog's rule: a backlog that was not read
	Backlog      int64 // closed by WithMaxBacklog: a backlog over the cap
	Grown        int64 // requests received into a growing buffer: WithFrameBudget had no room for them
	QueueTimeout int64 // requests not run: they waited for a worker too long (WithQueueTimeout)
	QueueFull    int64 // requests refused (-9): the worker queue was full (WithQueueCap, WithQueueBytes)
	// AcceptFailed counts accepts that failed and were retried after a pause (out of file
	// descriptors, or of socket memory): the connections already open went on (accept.go).
	AcceptFailed int64
}

// LimitStats returns what the limits refused and closed. Safe for concurrent use.
func (s *Server) LimitStats() LimitStats {
	return LimitStats{
		Refused:      s.lim.refused.Load(),
		Idle:         s.lim.idled.Load(),
		Slow:         s.lim.slowed.Load(),
		Backlog:      s.lim.capped.Load(),
		Grown:        s.budget.Grown(),
		QueueTimeout: s.lim.queueTimeouts.Load(),
		QueueFull:    s.lim.queueFull.Load(),
		AcceptFailed: s.lim.acceptFails.Load(),
	}
}

// sweepTick returns the time between sweeps, 0 when no limit needs them: a fraction of the idle
// timeout and of the backlog window, at most a second.
func (s *Server) sweepTick() time.Duration {
	o := &s.opts
	if s.udp || (o.idle <= 0 && o.backlogLimit <= 0 && o.authKeys == nil) {
		return 0
	}
	tick := time.Second
	if o.idle > 0 {
		tick = min(tick, o.idle/4)
	}
	if o.authKeys != nil {
		tick = min(tick, o.handshake/4)
	}
	if o.backlogLimit > 0 {
		tick = min(tick, s.lim.window/4)
	}
	return max(tick, 5*time.Millisecond)
}

// admit counts a new connection against WithMaxConns, and refuses it beyond. A stream server
// admits a connection as it accepts it (acceptLoop), before a loop takes it: one loop busy with a
// long handler then holds no connection beyond the limit, waiting to be opened.
func (s *Server) admit(remote net.Addr) bool {
	m := int64(s.opts.maxConns)
	if m <= 0 {
		return true
	}
	if s.lim.open.Add(1) <= m {
		return true
	}
	s.lim.open.Add(-1)
	s.lim.refused.Add(1)
	s.log.Debug("maxconns reached, closing a new connection", zap.Stringer("remote", remote))
	return false
}

// unadmit gives back the count of a connection admit let in that never opened, or was refused
// when it did (Stop began).
func (s *Server) unadmit() {
	if s.opts.maxConns > 0 {
		s.lim.open.Add(-1)
	}
}

// watch adds cs, just opened, to l's connections: the ones l sweeps when limits are checked,
// and the ones Stop waits for to have written their replies (unwritten).
func (l *loop) watch(cs *conn) {
	cs.lim.slot = len(l.conns)
	cs.lim.active = true
	if !cs.authed && cs.hs == nil {
		cs.lim.authBy = time.Now().Add(l.s.opts.handshake)
	}
	l.conns = append(l.conns, cs)
}

// forget removes cs, closing, from l's connections and the limits.
func (l *loop) forget(cs *conn) {
	s := l.s
	if s.opts.maxConns > 0 {
		s.lim.open.Add(-1)
	}
	last := len(l.conns) - 1
	moved := l.conns[last]
	l.conns[cs.lim.slot] = moved
	moved.lim.slot = cs.lim.slot
	l.conns[last] = nil
	l.conns = l.conns[:last]
}

// OnTick runs on gnet's ticker goroutine: it queues a sweep on each loop that has none queued.
func (e *events) OnTick() (time.Duration, gnet.Action) {
	s := e.s
	if !e.ticked {
		e.ticked = true
		close(e.ticking)
	}
	s.loopsMu.Lock()
	ls := s.lim.tickLoops[:0]
	for _, l := range s.loops {
		ls = append(ls, l)
	}
	s.loopsMu.Unlock()
	s.engineMu.RLock()
	for _, l := range ls {
		if s.engineDown || !l.sweepDue.CompareAndSwap(false, true) {
			continue
		}
		if err := l.el.Execute(context.Background(), l.sweepTask); err != nil {
			l.sweepDue.Store(false)
		}
	}
	s.engineMu.RUnlock()
	clear(ls)
	s.lim.tickLoops = ls[:0]
	return s.lim.tick, gnet.None
}

// sweep checks the limits of every connection of l. It runs on the loop goroutine.
func (l *loop) sweep(context.Context) error {
	l.sweepDue.Store(false)
	now := time.Now()
	for _, cs := range l.conns {
		if cs.c != nil && !cs.lim.closing && l.check(cs, now) {
			cs.lim.closing = true
			_ = cs.c.Close() // asynchronous: OnClose runs after this sweep
		}
	}
	return nil
}

// check applies the limits to cs and reports whether it must close.
func (l *loop) check(cs *conn, now time.Time) bool {
	s := l.s
	o := &s.opts
	if !cs.authed && cs.hs == nil && !cs.lim.authBy.IsZero() && now.After(cs.lim.authBy) {
		s.peerLine(zapcore.InfoLevel, "auth none", "auth: no auth request within the handshake timeout, closing",
			zap.Duration("limit", o.handshake), zap.Stringer("remote", cs.remote))
		return true
	}
	if o.idle <= 0 && o.backlogLimit <= 0 {
		return false // the sweeps run for WithAuth's deadline alone
	}
	busy := cs.handling.Load() != 0 // before its reply is looked for in backlog
	unsent, sent := l.backlog(cs)
	if o.maxBacklog > 0 && unsent > o.maxBacklog {
		l.capped(cs, unsent)
		return true
	}
	if o.backlogLimit > 0 && l.slow(cs, now, unsent, sent) {
		return true
	}
	if o.idle <= 0 {
		return false
	}
	// Idle is no byte moving either way (TarsCpp's rule): a running handler or a handshake is
	// work, reply bytes leaving are traffic (a push subscription), but replies that wait for a
	// client that reads none are not.
	lim := &cs.lim
	moved := sent != lim.seen
	lim.seen = sent
	if lim.active || busy || moved || cs.hs != nil {
		lim.active, lim.quiet = false, now
		return false
	}
	if since := now.Sub(lim.quiet); since >= o.idle {
		s.lim.idled.Add(1)
		s.log.Debug("idle connection closed", zap.Stringer("remote", cs.remote), zap.Duration("since_read", since))
		return true
	}
	return false
}

// backlog returns the reply bytes the server holds for cs (gnet's outbound buffer, what a
// large-reply writer has left, replies held behind it, worker replies not yet written) and the
// bytes it has sent so far. While the backlog is over WithBacklog's limit, sent counts what the
// client took: the bytes that left the socket's send queue too, not only gnet's buffer. gnet
// writes its buffer to the socket only when epoll says the socket is writable, once the
// kernel's queue has drained to about half: a client reading steadily, but less than that in a
// window, looked like one reading nothing, and was closed.
func (l *loop) backlog(cs *conn) (unsent int, sent int64) {
	buffered := l.unsentSeen(cs, cs.c) - cs.lim.held
	cs.mu.Lock()
	pending := cs.out.size()
	cs.mu.Unlock()
	unsent, sent = buffered+cs.lim.held+pending, cs.lim.handed-int64(buffered)
	if limit := l.s.opts.backlogLimit; limit > 0 && unsent > limit {
		sent -= sockq.Unsent(sockq.Fd(cs.c)) // a TLS connection's too: the socket under its records
	}
	return unsent, sent
}

// unsentSeen returns the reply bytes handed to cs's connection c and not yet in the socket
// (outbound) and those held while a large reply is written (cs.lim.held), and publishes them to
// Push (conn.seen). Loop goroutine only.
func (l *loop) unsentSeen(cs *conn, c gnet.Conn) int {
	n := outbound(cs, c) + cs.lim.held
	cs.seen.Store(int64(n))
	return n
}

// outbound returns the reply bytes handed to cs's connection c and not yet in the socket: gnet's
// outbound buffer and what a large-reply writer has left.
func outbound(cs *conn, c gnet.Conn) int {
	n := c.OutboundBuffered()
	if cs.big != nil {
		n += int(cs.big.Left())
	}
	return n
}

// slow applies WithBacklog's rule to cs, whose unsent bytes are unsent after sending sent, and
// reports whether it must close: TarsCpp's rule, a backlog above the limit for slowWindows
// windows in a row, in each of which it sent at most the minimum.
func (l *loop) slow(cs *conn, now time.Time, unsent int, sent int64) bool {
	s := l.s
	w := &cs.lim
	switch {
	case unsent <= s.opts.backlogLimit:
		w.over, w.slow = false, 0
		return false
	case !w.over:
		w.over, w.since, w.sent0, w.slow = true, now, sent, 0
		return false
	case now.Sub(w.since) < s.lim.window:
		return false
	}
	n := sent - w.sent0
	w.since, w.sent0 = now, sent
	s.lim.windows.Add(1)
	if n > int64(s.opts.backlogMin) {
		w.slow = 0
		return false
	}
	w.sent[w.slow] = n
	if w.slow++; w.slow < slowWindows {
		return false
	}
	s.lim.slowed.Add(1)
	s.peerLine(zapcore.WarnLevel, "slow reader", "client does not read its replies, closing", zap.Stringer("remote", cs.remote),
		zap.Int("bytes", unsent), zap.Int64s("sent", w.sent[:]))
	return true
}

// checkBacklog fails with errBacklog when the bytes the loop holds for cs, whose connection is c,
// exceed WithMaxBacklog. Called after replies were handed to cs.
func (l *loop) checkBacklog(cs *conn, c gnet.Conn) error {
	m := l.s.opts.maxBacklog
	if m <= 0 {
		return nil
	}
	n := l.unsentSeen(cs, c)
	if n <= m {
		return nil
	}
	if !cs.lim.closing {
		l.capped(cs, n)
	}
	return errBacklog
}

// capped counts and logs the closing of cs, whose unsent bytes reached n, by WithMaxBacklog.
func (l *loop) capped(cs *conn, n int) {
	cs.lim.closing = true
	l.s.lim.capped.Add(1)
	l.s.peerLine(zapcore.WarnLevel, "backlog", "reply backlog over the cap, closing", zap.Stringer("remote", cs.remote), zap.Int("bytes", n))
}

// dropOut drops the replies of a read whose connection is closing.
func (l *loop) dropOut() {
	l.out.release()
	if cap(l.out.b) > maxKeptBuffer {
		bufpool.Put(l.out.b)
		l.out.b = nil
	}
	l.out.b = l.out.b[:0]
}
