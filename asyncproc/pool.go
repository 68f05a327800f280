package asyncproc

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/lograte"
)

// maxChan is the largest buffer of the queue channel. Callbacks beyond it (only while the workers
// are behind) wait in the overflow list, so a large QueueCap costs no memory until it is used.
const maxChan = 4096

// closePoll is how often Close looks again at the calls it waits for.
const closePoll = 200 * time.Microsecond

// Options configures a Pool.
type Options struct {
	// Workers is the number of goroutines running callbacks; below 1 is 1.
	Workers int
	// QueueCap is the number of callbacks waiting for a worker at which Reserve starts failing
	// with ErrQueueFull; below 1 is 1.
	QueueCap int
	// InFlightLimit is the number of unfinished async calls (reserved and not yet called back)
	// at which Reserve starts failing with ErrQueueFull; 0 or below is no limit.
	InFlightLimit int
	// Log receives the panics of callbacks; nil is zap.NewNop().
	Log *zap.Logger
}

// Pool is a fixed set of worker goroutines running async-call finishers from a queue.
type Pool struct {
	// Immutable after New.
	queue    chan *call.Call // callbacks waiting for a worker; Deliver spills into overflow when full
	queueCap int64
	inflight int64 // InFlightLimit, math.MaxInt64 for none
	log      *zap.Logger

	wmu     sync.Mutex
	workers []*worker      // the worker goroutines alive: regular, replacements, stand-ins; guarded by wmu
	alive   sync.WaitGroup // the same, for Close to wait on (never added to from zero but by New)
	goexits atomic.Int64

	reserved atomic.Int64 // unfinished calls and events: in flight, waiting, or running their callback
	events   atomic.Int64 // of reserved, the events (ReserveEvent, ReserveNotice): not calls
	parked   atomic.Int64 // callbacks of workers blocked in Close (sum of worker.parked)
	spilled  atomic.Int64 // callbacks in overflow, readable without mu
	closing  atomic.Bool  // Close has begun: Reserve refuses
	stopped  atomic.Bool  // queue is closed
	panics   atomic.Int64
	panicLog lograte.Limiter // callbacks' panics, and their Goexits, are logged once a second at most

	mu       sync.Mutex
	overflow []*call.Call // callbacks that found queue full, oldest at head; guarded by mu
	head     int          // guarded by mu
}

// worker is one goroutine of the pool.
type worker struct {
	pool   *Pool
	id     uint64        // goroutine id; written before the worker is listed
	lender *worker       // the worker a stand-in stands in for (workers.go); nil for the others
	lend   lending       // its own stand-in, while a callback of its waits
	polled bool          // a wait of its callback ended by its ctx (workers.go); its goroutine only
	lent   bool          // its callback lent a stand-in (lend), held until it returns; its goroutine only
	done   chan struct{} // closed when the goroutine exits
	depth  int64         // callbacks it is running (0 or 1); its own goroutine only
	parked atomic.Int64  // of depth, the callbacks blocked in Close
}

// New starts the workers.
func New(o Options) *Pool {
	workers := max(o.Workers, 1)
	queueCap := max(o.QueueCap, 1)
	inflight := int64(math.MaxInt64)
	if o.InFlightLimit > 0 {
		inflight = int64(o.InFlightLimit)
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	p := &Pool{
		queue:    make(chan *call.Call, min(queueCap, maxChan)),
		queueCap: int64(queueCap),
		inflight: inflight,
		log:      log,
	}
	for range workers {
		p.start(nil)
	}
	return p
}

// Reserve takes a slot for an async call about to be sent: its callback will be delivered with
// Deliver, or the slot given back with Release if the call is never sent. It fails with
// call.ErrQueueFull while QueueCap callbacks or more wait for a worker or InFlightLimit calls are
// unfinished, and with call.ErrClosed once Close has begun. Safe for concurrent use.
func (p *Pool) Reserve() error { return p.reserve(false, true) }

// ReserveEvent is Reserve for a callback that is no call (a server push, delivered at once): it
// is not one of the calls InFlightLimit counts, and that limit does not refuse it; a full queue
// and Close do. The call delivered for it must have Handler set (so the pool tells it from a
// call's). Safe for concurrent use.
func (p *Pool) ReserveEvent() error { return p.reserve(true, true) }

// ReserveNotice is ReserveEvent for a notice that must not be lost (a connection opening or
// closing, which tells a subscriber when to subscribe again): only Close refuses it, not a full
// queue. There are at most two per connection, so they cannot flood the queue. Safe for
// concurrent use.
func (p *Pool) ReserveNotice() error { return p.reserve(true, false) }

// The refusals of reserve: ErrQueueFull, saying which limit (the Communicator's keys).
var (
	errInflightFull  = fmt.Errorf("%w: async-inflight-limit async calls are unfinished", call.ErrQueueFull)
	errCallbacksWait = fmt.Errorf("%w: asyncqueuecap callbacks wait for an async worker", call.ErrQueueFull)
)

// reserve takes a slot: for a call while fewer than InFlightLimit calls are reserved, for an
// event whatever the calls; while the queue has room when capped.
func (p *Pool) reserve(event, capped bool) error {
	// Count first, then look at closing: Close sets closing before it reads the count, so either
	// Close sees this slot and waits for it, or this sees closing and undoes it. Checking first
	// would let Close see no slot, close the queue, and this call deliver into it.
	n := p.reserved.Add(1)
	if event {
		p.events.Add(1)
	}
	var err error
	switch {
	case p.closing.Load():
		err = call.ErrClosed
	case !event && n-p.events.Load() > p.inflight:
		err = errInflightFull
	case capped && int64(len(p.queue))+p.spilled.Load() >= p.queueCap:
		err = errCallbacksWait
	}
	if err != nil {
		p.reserved.Add(-1)
		if event {
			p.events.Add(-1)
		}
	}
	return err
}

// Release gives back a slot taken by Reserve for a call that was never submitted.
func (p *Pool) Release() { p.reserved.Add(-1) }

// Deliver queues a completed call whose slot was reserved; its Finish runs on a worker. It never
// blocks and never drops: beyond the channel's buffer the call waits in an overflow list. The
// calls one goroutine delivers reach the workers in that order (one worker runs them in it).
// Safe for concurrent use. Every Deliver is for a slot Reserve gave, and Close stops the workers
// only once no reserved call is left to deliver, so Deliver never meets a stopped pool.
func (p *Pool) Deliver(c *call.Call) {
	if p.spilled.Load() != 0 {
		// Behind the calls waiting in the overflow: one deliverer's calls keep their order (a
		// spilled call leaves the count only once it is in the channel).
		p.spill(c)
		return
	}
	select {
	case p.queue <- c:
	default:
		p.spill(c)
	}
}

// spill appends c to the overflow list and moves what fits back into the channel. If the channel
// is still full, a worker will receive one of the calls in it after this, see spilled > 0, and
// refill: a spilled call is never stranded.
func (p *Pool) spill(c *call.Call) {
	p.mu.Lock()
	p.overflow = append(p.overflow, c)
	p.spilled.Add(1)
	p.mu.Unlock()
	p.refill()
}

// refill moves overflow calls, oldest first, into the channel while it has room. A list that
// never empties (a pool staying behind with more than the channel's worth waiting) is compacted
// once its consumed front is large and at least half of it, so that its array follows the calls
// waiting, not every call that ever passed through it: amortized O(1) per call.
func (p *Pool) refill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.head < len(p.overflow) {
		select {
		case p.queue <- p.overflow[p.head]:
			p.overflow[p.head] = nil
			p.head++
			p.spilled.Add(-1)
		default:
			if p.head >= 1024 && p.head >= len(p.overflow)/2 {
				n := copy(p.overflow, p.overflow[p.head:])
				clear(p.overflow[n:])
				p.overflow, p.head = p.overflow[:n], 0
			}
			return
		}
	}
	if cap(p.overflow) > maxChan {
		p.overflow = nil // let a burst's memory go
	} else {
		p.overflow = p.overflow[:0]
	}
	p.head = 0
}

// Pending returns the number of unfinished async calls and events: in flight, waiting for a
// worker, or running their callback.
func (p *Pool) Pending() int { return int(p.reserved.Load()) }

// Waiting returns the number of callbacks waiting for a worker, the number QueueCap bounds.
func (p *Pool) Waiting() int { return len(p.queue) + int(p.spilled.Load()) }

// Panics returns how many callbacks panicked so far.
func (p *Pool) Panics() int64 { return p.panics.Load() }

// Goexits returns how many callbacks ended their worker's goroutine with runtime.Goexit so far
// (each worker was replaced).
func (p *Pool) Goexits() int64 { return p.goexits.Load() }

func (p *Pool) run(w *worker, c *call.Call) {
	w.depth++
	running.Add(1)
	returned := false
	event := c.Handler != nil // Finish gives c back to its pool: read now
	defer func() {
		running.Add(-1)
		w.markPolled(false)
		if w.lent {
			w.unhold()
		}
		w.depth--
		if r := recover(); r != nil {
			p.panics.Add(1)
			// A callback that panics on every reply logs one line a second, with its stack and
			// the count of those it stands for (Panics counts them all).
			if ok, left := p.panicLog.Allow(""); ok {
				p.log.Error("async callback panicked", zap.Any("panic", r), zap.Uint64("suppressed", left), zap.Stack("stack"))
			}
		} else if !returned && w.depth == 0 {
			// runtime.Goexit (t.FailNow in a test's callback): no recover stops it, and the
			// worker's goroutine ends with this callback. Another takes its place.
			p.goexits.Add(1)
			p.replace(w)
		}
		p.reserved.Add(-1) // Close, which waits for it, sees the panic counted and logged
		if event {
			// After reserved: in between, Reserve counts one call fewer, never one more.
			p.events.Add(-1)
		}
	}()
	c.Finish(c)
	returned = true
}

// Close refuses new reservations, waits until every reserved call has been delivered and its
// callback has run, then stops the workers and waits for them. The owner must first make sure
// every reservation ends (the Communicator closes its net threads, which completes every call).
// Calling Close again, or concurrently, returns when the pool is closed.
//
// Close called from a callback of this pool (found by its goroutine id, the only thing that
// tells a worker from another goroutine) does all of that except waiting for the callbacks that
// are themselves blocked in Close, its own included: while it waits its worker lends a stand-in
// (workers.go), so even a single worker drains, and a callback the stand-in runs may call Close
// again. When it returns, no other callback is running or will run, except other callbacks that
// also called Close and are still returning from it; its own worker exits once the callback
// returns. Close called from a callback of another pool does the same: its callback waits parked
// in its own pool, which it lends a stand-in meanwhile, so that two pools whose callbacks close
// each other both close.
func (p *Pool) Close() {
	p.closing.Store(true)
	if w := current(); w != nil {
		p.closeFromWorker(w)
		return
	}
	for p.reserved.Load() > 0 {
		time.Sleep(closePoll)
	}
	p.stop()
	p.alive.Wait()
}

// closeFromWorker is Close on worker w's goroutine, inside w.depth callbacks of w's pool, p's or
// another's.
func (p *Pool) closeFromWorker(w *worker) {
	own := w.pool
	prev := w.parked.Load()
	w.parked.Store(w.depth)
	own.parked.Add(w.depth - prev)
	defer func() {
		w.parked.Store(prev)
		own.parked.Add(prev - w.depth)
	}()
	// Every reserved call left is a callback blocked in Close once reserved <= parked: reserved
	// is read first, and no slot is reserved after closing was set.
	release := own.lend(w)
	for p.reserved.Load() > p.parked.Load() {
		time.Sleep(closePoll)
	}
	p.stop()
	release()
	for _, o := range p.listed() {
		if o == w {
			continue
		}
		for !o.exited() && o.parked.Load() == 0 {
			time.Sleep(closePoll)
		}
	}
}

// stop closes the queue, once; the workers exit when it is empty.
func (p *Pool) stop() {
	if p.stopped.CompareAndSwap(false, true) {
		close(p.queue)
	}
}

func (w *worker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}
