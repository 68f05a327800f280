package netthread

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/gnetlog"
	"github.com/tarscomm/tarscomm/internal/lograte"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// Options configure a Thread.
type Options struct {
	Index          int           // the thread's number in its Communicator, for logs
	QueueCap       int           // most calls waiting to be routed; more fail with ErrQueueFull
	CheckInterval  time.Duration // how often deadlines are swept
	ConnectTimeout time.Duration // limit for one dial
	MaxPacketSize  int           // largest reply frame accepted
	Health         adapterproxy.Health
	KeepAlive      time.Duration // tars_ping a connection that made no progress this long; 0: off
	NoStats        bool          // count no calls (stats.Recorder off)
	NoDirect       bool          // callers never route and write a call themselves (direct.go); every call goes through the loop
	SendBuffer     int           // unsent bytes per connection before calls fail; 0: default
	// StatsRetention is how long the counters of an endpoint that left its servant's list, and
	// no call was counted for, are kept for its return (keepPast); 0: 10 minutes. The
	// Communicator's stats retention (its forgetting of call counts).
	StatsRetention time.Duration
	// TLS holds the TLS settings of ssl endpoints by servant (object name); the entry "" is
	// every other servant's. A servant with no entry (and no "") uses Go's defaults: the system's
	// roots and the endpoint's host verified. The handshake is part of the connect, within
	// ConnectTimeout. See package tlsconn.
	TLS map[string]*tls.Config
	// Auth holds the credentials for endpoints with -e 1 (TARS authentication) by servant, ""
	// for every other servant. The auth request is the connection's first packet, sent and
	// answered within ConnectTimeout before any call is written. See package auth.
	Auth map[string]auth.Credentials
	Log  *zap.Logger
	// Warnings limits the warnings about each endpoint across the threads given the same
	// (adapterproxy.Options.Warnings); nil: each connection on its own.
	Warnings *lograte.Limiter
}

// closedBit marks a Thread as closed in its gate word; the low bits count Submits in progress.
const closedBit = 1 << 62

// Thread is one net thread: a gnet event loop and everything it owns.
type Thread struct {
	// Immutable after New.
	opts      Options
	log       *zap.Logger
	client    *gnet.Client
	loop      gnet.EventLoop // handle for Execute, from the anchor connection
	anchorFD  int            // our end of the anchor socket pair: a byte written here wakes the loop
	apOptions adapterproxy.Options
	ctx       context.Context // cancelled by Close: ends dials
	cancel    context.CancelFunc
	rec       *stats.Recorder            // the calls that end on this loop; nil with NoStats (used on the loop)
	past      map[endpointKey]pastCounts // counters of endpoints' connections gone (keepPast; loop only)
	batch     []byte                     // the connections' Flushes gather frames here, one at a time (Batch)

	// Shared with callers; atomics only.
	queue        call.Stack
	queued       atomic.Int64 // calls in queue
	notified     atomic.Bool  // a wakeup is on its way to the loop
	tickDue      atomic.Bool  // the ticker asked for a sweep
	idle         atomic.Bool  // the wheel was empty at the end of the last turn: the ticker wakes the loop for chores only
	tickerAsleep atomic.Bool  // the ticker sleeps until the next chore: a call entering the wheel pokes it
	choreAt      atomic.Int64 // nextChore, for the ticker
	gate         atomic.Int64 // closedBit | Submits in progress
	broken       atomic.Bool  // the anchor socket failed: the loop can no longer be woken
	stopped      atomic.Bool  // Close has ended: the loop is gone, Snapshot reads the final counters under own

	objsMu sync.Mutex
	objs   []*objectproxy.ObjectProxy // every ObjectProxy built on this thread

	// The loop side (direct.go): the state below, and every ObjectProxy and AdapterProxy of the
	// thread, belong to whoever holds own: the loop goroutine while it runs any of this
	// package's code, or a caller on the direct path (borrowed set) for the few microseconds it
	// takes to route and write one call while the loop is idle.
	own        sync.Mutex
	quiet      atomic.Bool // no call waits on this thread (published at the end of each turn): the direct path is open
	borrowed   bool        // a caller holds own on the direct path (guarded by own)
	loopInside bool        // the loop goroutine holds own (read and written by the loop goroutine only)
	lastLen    int         // calls in the wheel at the end of the last turn (guarded by own)
	enterLen   int         // calls in the wheel when the loop's current turn began (loop goroutine only)

	// Owned by the holder of own.
	wheel     *call.Wheel
	now       int64
	dirty     []*adapterproxy.AdapterProxy
	later     []*adapterproxy.AdapterProxy // flushes resumed on the next turn (Resume)
	counts    stats.NetThread              // wakeups, batches, requests
	flushing  bool                         // flush is running (it can be re-entered from a write error)
	sweeping  bool                         // sweep is running
	nextChore int64                        // when connection chores (keepalive, idle close) run next
	tickTurns uint64                       // turns the ticker asked for (tests read it)

	// Lifetimes.
	dialMu     sync.RWMutex // held for reading while a dialer enrolls a connection
	dialClosed bool         // guarded by dialMu: no more enrolls
	dials      sync.WaitGroup
	stopTicker chan struct{}
	tickerDone chan struct{}
	pokeTicker chan struct{} // wakes the ticker asleep until the next chore (publish)
	closeOnce  sync.Once
}

// New starts a net thread: its gnet loop and its ticker.
func New(opts Options) (*Thread, error) {
	if opts.QueueCap <= 0 {
		opts.QueueCap = 100000
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = 10 * time.Millisecond
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 1500 * time.Millisecond
	}
	if opts.MaxPacketSize <= 0 {
		opts.MaxPacketSize = codec.DefaultMaxPacketSize
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	t := &Thread{
		opts:       opts,
		log:        opts.Log.With(zap.Int("netthread", opts.Index)),
		stopTicker: make(chan struct{}),
		tickerDone: make(chan struct{}),
		pokeTicker: make(chan struct{}, 1),
	}
	if !opts.NoStats {
		t.rec = new(stats.Recorder)
	}
	t.apOptions = adapterproxy.Options{
		MaxPacketSize:   opts.MaxPacketSize,
		ConnectTimeout:  opts.ConnectTimeout,
		Health:          opts.Health,
		KeepAlive:       opts.KeepAlive,
		SendBufferLimit: opts.SendBuffer,
		FlushBudget:     opts.CheckInterval,
		Log:             t.log,
		Warnings:        opts.Warnings,
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.wheel = call.NewWheel(int64(opts.CheckInterval), call.Now())
	t.quiet.Store(!opts.NoDirect)

	client, err := gnet.NewClient(&handler{t: t},
		gnet.WithNumEventLoop(1),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetlog.New(t.log)),
	)
	if err != nil {
		t.cancel()
		return nil, fmt.Errorf("netthread: %w", err)
	}
	if err := client.Start(); err != nil {
		t.cancel()
		return nil, fmt.Errorf("netthread: start loop: %w", err)
	}
	t.client = client
	if err := t.enrollAnchor(); err != nil {
		_ = client.Stop()
		t.cancel()
		return nil, err
	}
	go t.tick()
	return t, nil
}

// enrollAnchor registers one end of a socket pair with the loop. gnet offers no handle on a
// client loop that has no connection; the anchor's EventLoop is that handle, and Execute on it
// is how callers wake the loop. Both ends are non-blocking: the loop reads the bytes only when
// gnet polls, and hand-backs clear the notified flag without reading, so wakeups can fill the
// socket's buffer between two polls (a few hundred one-byte writes); a write that finds it full
// returns EAGAIN (the loop has bytes to read, so it will run) instead of blocking its caller,
// which may be the loop itself or a caller holding the loop side.
func (t *Thread) enrollAnchor() error {
	fds, err := socketPair()
	if err != nil {
		return fmt.Errorf("netthread: anchor socketpair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "netthread-anchor-loop")
	nc, err := net.FileConn(theirs)
	_ = theirs.Close()
	if err != nil {
		_ = syscall.Close(fds[0])
		return fmt.Errorf("netthread: anchor conn: %w", err)
	}
	gc, err := t.client.EnrollContext(nc, anchorCtx{})
	if err != nil {
		_ = syscall.Close(fds[0])
		return fmt.Errorf("netthread: enroll anchor: %w", err)
	}
	t.anchorFD = fds[0]
	t.loop = gc.EventLoop()
	return nil
}

// anchorCtx marks the anchor connection in gnet callbacks.
type anchorCtx struct{}

// NewObjectProxy builds the ObjectProxy of target's servant on this thread with opts, its
// AdapterProxies taking the thread's connection options. Safe for concurrent use; the
// ObjectProxy belongs to the loop afterwards and is reached only through calls submitted with
// Dest set to it.
func (t *Thread) NewObjectProxy(target endpoint.Target, opts objectproxy.Options) (*objectproxy.ObjectProxy, error) {
	if opts.Gone == nil {
		opts.Gone = t.keepPast
	}
	o, err := objectproxy.New(target, t.onLoop(), t.apOptions, opts)
	if err != nil {
		return nil, err
	}
	t.objsMu.Lock()
	t.objs = append(t.objs, o)
	t.objsMu.Unlock()
	return o, nil
}

// ObjectProxies returns the ObjectProxies built on this thread, oldest first. Safe for
// concurrent use; the ObjectProxies themselves belong to the loop.
func (t *Thread) ObjectProxies() []*objectproxy.ObjectProxy {
	return append([]*objectproxy.ObjectProxy(nil), t.objects()...)
}

// FailCalls ends, on the loop, every call of the servants which reports (their ObjectProxies'
// calls sent, queued on connections, or waiting for a first endpoint list) with err, and waits
// for it at most for timeout. Calls still in the submission queue are not among them. Safe for
// concurrent use.
func (t *Thread) FailCalls(which func(servant string) bool, err error, timeout time.Duration) {
	done := make(chan struct{})
	t.post(func() {
		for _, o := range t.objects() {
			if which(o.Name()) {
				o.FailAll(err)
			}
		}
		close(done)
	})
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case <-done:
	case <-tm.C:
	}
}

// Execute runs fn on the loop goroutine soon, then flushes the connections it made dirty; after
// Close fn is dropped. It is how an endpoint list reaches an ObjectProxy. Safe for concurrent
// use.
func (t *Thread) Execute(fn func()) { t.post(fn) }

func (t *Thread) objects() []*objectproxy.ObjectProxy {
	t.objsMu.Lock()
	defer t.objsMu.Unlock()
	return t.objs
}

// errQueueFull is Submit's refusal: ErrQueueFull, saying which limit.
var errQueueFull = fmt.Errorf("%w: queue-cap calls wait for their net thread", call.ErrQueueFull)

// Submit hands c (with Dest and Frame set) to the loop. It fails with call.ErrQueueFull
// when QueueCap calls are already waiting, and with call.ErrClosed after Close; on error the
// caller still owns c. Safe for concurrent use.
//
// On the direct path (direct.go) c is routed inside Submit, on the caller's goroutine, and may
// end there (no endpoint, send-buffer-limit, ...): c.Complete, and so c.Notify, can run before
// Submit returns, on the goroutine that called it, but only when no other call is on the
// thread. A caller that holds, across Submit, a lock that c's Notify takes must know that
// another call is on the thread then (servantproxy's asyncBackup does: the backup's primary).
func (t *Thread) Submit(c *call.Call) error {
	if t.gate.Add(1)&closedBit != 0 {
		t.gate.Add(-1)
		return call.ErrClosed
	}
	if t.broken.Load() {
		t.gate.Add(-1)
		return errBroken
	}
	if t.quiet.Load() && t.queued.Load() == 0 && t.own.TryLock() {
		t.direct(c)
		t.own.Unlock()
		t.gate.Add(-1)
		return nil
	}
	if t.queued.Add(1) > int64(t.opts.QueueCap) {
		t.queued.Add(-1)
		t.gate.Add(-1)
		return errQueueFull
	}
	t.queue.Push(c)
	if !t.notified.Load() && t.notified.CompareAndSwap(false, true) {
		t.wake()
	}
	if t.broken.Load() {
		// The wakeup socket failed after the check above: the drain that failed the queue may
		// have run before this push, and nothing wakes the loop any more. Another drain,
		// through gnet's own wakeup, fails what is queued now (this call included).
		t.post(func() { t.failAll(errBroken) })
	}
	t.gate.Add(-1)
	return nil
}

// wakeByte is what wake writes to the anchor socket.
var wakeByte = []byte{1}

// wake makes the loop run Run soon. It writes one byte to the anchor socket pair: the loop sees
// it as traffic on the anchor connection. Unlike EventLoop.Execute this allocates nothing; the
// notified flag keeps at most one byte in flight.
func (t *Thread) wake() {
	for {
		_, err := syscall.Write(t.anchorFD, wakeByte)
		switch err {
		case nil:
			return
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return // bytes are waiting already: the loop will run
		}
		t.wakeFailed(err)
		return
	}
}

// wakeFailed handles a write to the anchor socket that failed with err while the socket stays
// open (its close is anchorLost's). The loop can no longer be woken through it, neither for
// queued calls nor for the ticker's sweeps, so the thread refuses new calls (broken) and, through
// gnet's own wakeup (post), fails every call it holds: none waits for a sweep that would never
// come, as a call its caller routed on the direct path, which only a reply or a sweep ends, would.
func (t *Thread) wakeFailed(err error) {
	if t.gate.Load()&closedBit != 0 || t.broken.Swap(true) {
		return
	}
	t.log.Error("netthread: cannot wake the event loop: its wakeup socket failed; calls on this thread now fail", zap.Error(err))
	t.post(func() { t.failAll(errBroken) })
}

// errBroken is the error of calls submitted to a thread whose wakeup socket failed.
var errBroken = fmt.Errorf("%w: net thread cannot be woken (its wakeup socket failed)", call.ErrClosed)

// anchorLost runs on the loop when the anchor connection closed. During Close that is expected;
// at any other time the loop could never be woken again, so the thread fails loudly: it logs an
// error, refuses new calls and fails every call it holds.
func (t *Thread) anchorLost(err error) {
	if t.gate.Load()&closedBit != 0 {
		return
	}
	if !t.broken.Swap(true) {
		t.log.Error("netthread: the event loop's wakeup socket closed; calls on this thread now fail", zap.Error(err))
	}
	t.failAll(errBroken)
}

// run is the loop-side half of a wakeup: it sweeps expired deadlines, runs the connection
// chores when the ticker asked, drains and routes every queued call, and flushes each
// connection touched, all at t.now, which the turn read once at its start. It returns how many
// calls it drained. Only the loop runs it.
func (t *Thread) run() int64 {
	t.notified.Store(false)
	t.sweep()
	if t.tickDue.Load() {
		t.tickDue.Store(false)
		t.tickTurns++
		if t.now >= t.nextChore {
			t.chores()
		}
	}
	n := int64(0)
	rec := t.rec != nil
	for c := t.queue.Drain(); c != nil; {
		next := c.Next()
		n++
		if rec {
			c.Rec = t.onLoop() // the endpoint's AdapterProxy takes over once one is chosen
		}
		if c.Abandoned() {
			c.Complete(nil) // counted as cancelled, and recycled
		} else {
			c.Dest.Route(c)
		}
		c = next
	}
	if n > 0 {
		t.queued.Add(-n)
		t.counts.Batches++
		t.counts.Requests += uint64(n)
	}
	if len(t.later) > 0 {
		t.dirty = append(t.dirty, t.later...)
		clear(t.later)
		t.later = t.later[:0]
	}
	t.flush()
	return n
}

// handBack ends a turn of traffic during which the loop held notified, which tells Submit that a
// drain is coming and no wakeup is needed: it drains the queue as a wakeup's turn would.
//
// A turn that reads replies makes their callers runnable (sync callers, or the async workers
// their callbacks went to), and another CPU runs some of them at once; most make their next
// call right away. Without the flag held, each burst of those calls would find the loop busy
// or on its way back to epoll_wait and pay a wakeup: a write to the anchor socket, the loop's
// return from epoll_wait and its read of the byte. With it, what they submit during the turn
// leaves with this drain. A Submit after the drain sees notified clear and wakes the loop as
// usual: nothing waits on the flag.
//
// The loop does not yield before the drain to let the callers on its own P submit first: with
// one connection that was worth about 1% at most, and with eight connections, a yield after
// each one's turn cost a tenth of the rate (benchmarks/RESULTS.md, 2026-12-03).
//
// It runs inside the turn, holding the loop side: the turn publishes whether the thread is
// quiet once, after the drain, and a lone caller cannot take the direct path between the
// replies and the drain. Loop goroutine only.
func (t *Thread) handBack() {
	if t.run() > 0 {
		t.counts.HandBacks++
	}
}

// chores runs the connections' periodic work, at most every choreInterval (or every keepalive
// interval / 4 when that is shorter).
func (t *Thread) chores() {
	every := int64(choreInterval)
	if ka := int64(t.opts.KeepAlive) / 4; ka > 0 && ka < every {
		every = ka
	}
	t.nextChore = t.now + every
	t.choreAt.Store(t.nextChore)
	for _, o := range t.objects() {
		o.Tick(t.now)
	}
}

// choreInterval is how often connection chores run at most.
const choreInterval = 100 * time.Millisecond

// flush writes every connection that got calls since the last flush. A flush can make more
// connections dirty (a failed write retries its calls elsewhere), so the list is walked by index.
// A failed write runs OnClose inside Flush, which flushes again: the inner call returns at once
// and the outer loop picks up what it added.
func (t *Thread) flush() {
	if t.flushing {
		return
	}
	t.flushing = true
	for i := 0; i < len(t.dirty); i++ {
		a := t.dirty[i]
		t.dirty[i] = nil
		a.Flush()
	}
	t.dirty = t.dirty[:0]
	t.flushing = false
}

// post runs fn on the loop; after shutdown it is dropped (Close has failed every call).
func (t *Thread) post(fn func()) {
	_ = t.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		entered := t.enter()
		t.now = call.Now()
		fn()
		t.sweep()
		t.flush()
		t.exit(entered)
		return nil
	}))
}

// sweep expires the calls whose deadline passed by t.now. Every turn of the loop runs it
// (wakeups, traffic, closes, posted work), not only the ticker's: a call's expiry does not wait
// for the ticker goroutine to be scheduled. It costs one comparison when no slot of the wheel
// is due.
func (t *Thread) sweep() {
	if t.sweeping {
		return // a close inside an expiry (a failed write) is swept by the outer sweep
	}
	t.sweeping = true
	t.wheel.Advance(t.now)
	t.sweeping = false
}

// tick asks the loop for a deadline sweep every check interval while calls wait in the wheel,
// and for the connections' chores when they are due. While the thread is idle (its wheel was
// empty at the end of the loop's last turn) neither the loop nor the ticker wakes between
// chores: the ticker sleeps until the next, and the turn that puts a call into the empty wheel
// wakes it (publish, which pokes it when it is asleep; each of them stores its flag before it
// reads the other's, so one of them sees the other).
func (t *Thread) tick() {
	defer close(t.tickerDone)
	every := t.opts.CheckInterval
	tm := time.NewTimer(every)
	defer tm.Stop()
	for {
		select {
		case <-tm.C:
			t.tickerAsleep.Store(false)
		case <-t.pokeTicker:
			tm.Reset(every) // a call entered the wheel: nothing is due before its first tick
			continue
		case <-t.stopTicker:
			return
		}
		if t.idle.Load() {
			if wait := time.Duration(t.choreAt.Load() - call.Now()); wait > 0 {
				t.tickerAsleep.Store(true)
				if t.idle.Load() {
					tm.Reset(wait) // nothing to expire, no chore due: the loop sleeps on
					continue
				}
				t.tickerAsleep.Store(false)
			}
		}
		tm.Reset(every)
		t.tickDue.Store(true)
		if t.notified.CompareAndSwap(false, true) {
			t.wake()
		}
	}
}

// Close fails every call that is queued or pending on this thread with call.ErrClosed, then
// stops the loop, the ticker and any dial in progress, and waits for them. Calling it again does
// nothing. Safe for concurrent use.
func (t *Thread) Close() {
	t.closeOnce.Do(t.close)
}

func (t *Thread) close() {
	// Refuse new Submits and wait for the ones in progress, so nothing is pushed after the
	// final drain below.
	t.gate.Add(closedBit)
	for t.gate.Load() != closedBit {
		time.Sleep(50 * time.Microsecond)
	}
	close(t.stopTicker)
	<-t.tickerDone

	// Stop dials: none enrolls from now on.
	t.cancel()
	t.dialMu.Lock()
	t.dialClosed = true
	t.dialMu.Unlock()

	// Fail everything on the loop, then stop it.
	done := make(chan struct{})
	err := t.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		entered := t.enter()
		t.failAll(call.ErrClosed)
		t.exit(entered)
		close(done)
		return nil
	}))
	if err == nil {
		<-done
	}
	if err := t.client.Stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.log.Debug("gnet client stop", zap.Error(err))
	}
	t.dials.Wait()
	// The loop is gone: drain whatever is left (nothing, unless the loop could not run the
	// task above) from this goroutine.
	t.own.Lock()
	t.failAll(call.ErrClosed)
	t.now = call.Now() // the final snapshots' clock
	t.stopped.Store(true)
	t.own.Unlock()
	_ = syscall.Close(t.anchorFD)
}

// failAll ends every queued and pending call with err. It runs on the loop, or after the loop
// has exited.
func (t *Thread) failAll(err error) {
	for c := t.queue.Drain(); c != nil; {
		next := c.Next()
		t.queued.Add(-1)
		if c.Abandoned() {
			call.Put(c)
		} else {
			c.Complete(err)
		}
		c = next
	}
	for _, o := range t.objects() {
		o.FailAll(err)
	}
}
