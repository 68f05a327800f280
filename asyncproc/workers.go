package asyncproc

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"
)

// The worker goroutines. Besides its regular workers a pool may run two other kinds, each a
// worker like the others while it lives (listed, counted in alive, found by self):
//
//   - A replacement, started when a callback ends its worker's goroutine with runtime.Goexit
//     (t.FailNow in a test's callback): no recover stops it, so the worker would be lost, and
//     with one worker no callback would run again and Close would wait forever.
//   - A stand-in, started while a callback waits for a future (Wait, a future's Get or Join on a
//     worker): the future is completed by a callback of the same pool (a call's own completion),
//     which would otherwise wait for a worker the waiting callbacks hold; with every worker
//     waiting so, for good. The stand-in runs waiting callbacks until the wait ends, on its own
//     goroutine, so the waiting callback's stack and its locks stay its own.
//
// A goroutine is told to be a worker, of any pool, by its id (goid), kept in byGoroutine.
var byGoroutine sync.Map // goroutine id → *worker

// start starts a worker goroutine, a stand-in until stop is closed if stop is not nil, and
// returns once it is listed.
func (p *Pool) start(stop <-chan struct{}) {
	w := &worker{pool: p, stop: stop, done: make(chan struct{})}
	p.alive.Add(1)
	listed := make(chan struct{})
	go p.work(w, listed)
	<-listed
}

// work is a worker goroutine's life: it runs callbacks from the queue until the queue is closed
// and empty, or its stop is closed.
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
	for {
		select {
		case c, ok := <-p.queue:
			if !ok {
				return
			}
			if p.spilled.Load() != 0 {
				p.refill() // this receive made room
			}
			p.run(w, c)
		case <-w.stop:
			return
		}
	}
}

// replace starts a worker in w's place: w's goroutine is ending (runtime.Goexit in a callback).
// A stand-in's replacement stands in until the same wait ends. It is counted before w's
// goroutine ends, so Close, which waits for every worker, waits for it too.
func (p *Pool) replace(w *worker) {
	p.log.Error("async callback called runtime.Goexit; its worker is replaced", zap.Stack("stack"))
	p.start(w.stop)
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

// Wait returns nil once done is closed, or ctx's error when ctx ends first (future.Helper). On a
// worker goroutine, of this pool or another (a callback waiting for a call's future, whose
// completion is a callback too), a stand-in runs the worker's pool's waiting callbacks until the
// wait ends: a callback that waits for another call's future does not wait for itself, even with
// every worker waiting so.
func (p *Pool) Wait(ctx context.Context, done <-chan struct{}) error {
	if w := current(); w != nil && !w.pool.stopped.Load() {
		stop := make(chan struct{})
		w.pool.start(stop)
		defer close(stop)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
