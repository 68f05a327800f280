package asyncproc

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The worker goroutines. Besides its regular workers a pool may run two other kinds, each a
// worker like the others while it lives (listed, counted in alive, found by self):
//
//   - A replacement, started when a callback ends its worker's goroutine with runtime.Goexit
//     (t.FailNow in a test's callback): no recover stops it, so the worker would be lost, and
//     with one worker no callback would run again and Close would wait forever.
//   - A stand-in, lent by a worker whose callback waits: for a future (Wait: a future's Get or
//     Join) or for a pool to close (Close). What it waits for may be a callback of the same pool
//     (a call's own completion), which would otherwise wait for a worker the waiting callbacks
//     hold: with every worker waiting so, for good. The stand-in runs waiting callbacks on its
//     own goroutine, so the waiting callback's stack stays its own (a Goexit in one it runs ends
//     the stand-in, which is replaced, not the waiter), until the waiting callback has returned
//     and no wait of its worker is left: the callback's next waits (a loop of Gets) find it
//     ready. A worker lends at most one stand-in at a time; while it does, its pool may run one
//     callback more than it has workers, and callbacks may start out of their order.
//
// A goroutine is told to be a worker, of any pool, by its id (goid), kept in byGoroutine. Reading
// it costs a stack trace, so a wait for a future asks only after lendAfter, and only while some
// callback runs somewhere (running): a wait from any other goroutine pays a timer at most. A
// worker whose wait ended by its ctx is marked polled until its callback returns or one of its
// waits ends with its future, and while any worker is so marked (pollers) waits ask at once: a
// callback polling a future with waits shorter than lendAfter lends a stand-in all the same.
var (
	byGoroutine sync.Map     // goroutine id → *worker
	running     atomic.Int64 // callbacks running, in every pool
	pollers     atomic.Int64 // workers marked polled
)

// lendAfter is how long a wait for a future on a worker goes before the worker lends a stand-in:
// the future of a call usually completes sooner, from another worker.
const lendAfter = time.Millisecond

// lending is a worker's stand-in: how many of its waits need one, whether the callback that
// lent it still runs, and whether one runs.
type lending struct {
	mu      sync.Mutex
	waits   int
	held    bool // the callback that lent the stand-in has not returned: it stays
	running bool
	wake    chan struct{} // (1) tells the stand-in that waits dropped or the callback returned
}

// start starts a worker goroutine, a stand-in for lender if lender is not nil, and returns once
// it is listed.
func (p *Pool) start(lender *worker) {
	w := &worker{pool: p, lender: lender, done: make(chan struct{})}
	p.alive.Add(1)
	listed := make(chan struct{})
	go p.work(w, listed)
	<-listed
}

// work is a worker goroutine's life: it runs callbacks from the queue until the queue is closed
// and empty, or, a stand-in, until its lender's waits are over.
func (p *Pool) work(w *worker, listed chan<- struct{}) {
	w.id = goid()
	byGoroutine.Store(w.id, w)
	p.wmu.Lock()
	p.workers = append(p.workers, w)
	p.wmu.Unlock()
	close(listed)
	defer func() {
		p.wmu.Lock()
		p.workers = slices.DeleteFunc(p.workers, func(o *worker) bool { return o == w })
		p.wmu.Unlock()
		byGoroutine.Delete(w.id)
		close(w.done)
		p.alive.Done()
	}()
	var wake chan struct{}
	if l := w.lender; l != nil {
		wake = l.lend.wake
	}
	for {
		if l := w.lender; l != nil && !l.lend.keep() {
			return
		}
		select {
		case c, ok := <-p.queue:
			if !ok {
				if l := w.lender; l != nil {
					l.lend.quit()
				}
				return
			}
			if p.spilled.Load() != 0 {
				p.refill() // this receive made room
			}
			p.run(w, c)
		case <-wake:
		}
	}
}

// keep reports whether a stand-in goes on: a wait of its worker is left, or the callback that
// lent it still runs. Once it says no, the stand-in is gone, and the next wait lends a new one.
func (l *lending) keep() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waits == 0 && !l.held {
		l.running = false
	}
	return l.running
}

// quit records that the stand-in ended (the queue closed).
func (l *lending) quit() {
	l.mu.Lock()
	l.running = false
	l.mu.Unlock()
}

// lend has w lend a stand-in to p for a wait of w's callback, unless one runs already or p has
// stopped, and returns what ends the wait. The stand-in stays until the callback returns too
// (unhold). Must be called on w's goroutine.
func (p *Pool) lend(w *worker) (release func()) {
	l := &w.lend
	w.lent = true
	l.mu.Lock()
	if l.wake == nil {
		l.wake = make(chan struct{}, 1) // before the stand-in starts, which reads it
	}
	l.waits++
	l.held = true
	start := !l.running && !p.stopped.Load()
	if start {
		l.running = true
	}
	l.mu.Unlock()
	if start {
		p.start(w)
	}
	return func() {
		l.mu.Lock()
		l.waits--
		l.mu.Unlock()
		l.nudge()
	}
}

// unhold lets w's stand-in go once no wait is left: the callback that lent it returned. Run on
// w's goroutine after each callback that lent one.
func (w *worker) unhold() {
	w.lent = false
	l := &w.lend
	l.mu.Lock()
	l.held = false
	l.mu.Unlock()
	l.nudge()
}

// nudge wakes the stand-in to look at keep again.
func (l *lending) nudge() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// replace starts a worker in w's place: w's goroutine is ending (runtime.Goexit in a callback).
// A stand-in's replacement stands in for the same worker. It is counted before w's goroutine
// ends, so Close, which waits for every worker, waits for it too.
func (p *Pool) replace(w *worker) {
	if ok, left := p.panicLog.Allow("goexit"); ok { // as panics: once a second at most
		p.log.Error("async callback called runtime.Goexit; its worker is replaced", zap.Uint64("suppressed", left), zap.Stack("stack"))
	}
	p.start(w.lender)
}

// listed returns the workers alive now.
func (p *Pool) listed() []*worker {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return slices.Clone(p.workers)
}

// self returns p's worker whose goroutine calls it, or nil.
func (p *Pool) self() *worker {
	if w := current(); w != nil && w.pool == p {
		return w
	}
	return nil
}

// current returns the worker, of any pool, whose goroutine calls it, or nil.
func current() *worker {
	if v, ok := byGoroutine.Load(goid()); ok {
		return v.(*worker)
	}
	return nil
}

// Wait returns nil once done is closed, or ctx's error when ctx ends first (future.Helper). A
// wait on a worker goroutine, of this pool or another (a callback waiting for a call's future,
// whose completion is a callback too), that lasts lendAfter lends a stand-in to the worker's pool
// until it ends: a callback that waits for another call's future does not wait for itself, even
// with every worker waiting so.
func (p *Pool) Wait(ctx context.Context, done <-chan struct{}) error {
	var w *worker           // the caller's, once looked up
	if running.Load() > 0 { // some callback runs: this may be one
		looked := pollers.Load() > 0
		if looked {
			w = current()
		}
		if w == nil || !w.polled {
			t := time.NewTimer(lendAfter)
			select {
			case <-done:
				t.Stop()
				return nil
			case <-ctx.Done():
				t.Stop()
				if !looked {
					w = current()
				}
				w.markPolled(true)
				return ctx.Err()
			case <-t.C:
			}
			if !looked {
				w = current()
			}
		}
		if w != nil {
			defer w.pool.lend(w)()
		}
	}
	select {
	case <-done:
		w.markPolled(false)
		return nil
	case <-ctx.Done():
		w.markPolled(true)
		return ctx.Err()
	}
}

// markPolled marks w (nil: not a worker) as polling a future or not. Its own goroutine only.
func (w *worker) markPolled(on bool) {
	if w == nil || w.polled == on {
		return
	}
	w.polled = on
	if on {
		pollers.Add(1)
	} else {
		pollers.Add(-1)
	}
}
