package asyncproc

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/call"
)

// Pool is a fixed set of worker goroutines running async-call finishers from a bounded queue.
type Pool struct {
	// Immutable after New.
	queue    chan *call.Call
	capacity int64
	log      *zap.Logger
	wg       sync.WaitGroup

	reserved  atomic.Int64 // slots taken by calls in flight or queued
	closing   atomic.Bool  // Close has begun: Reserve refuses
	panics    atomic.Int64
	closeOnce sync.Once
}

// New starts workers goroutines sharing a queue of capacity calls. workers and capacity below 1
// are raised to 1.
func New(workers, capacity int, log *zap.Logger) *Pool {
	if workers < 1 {
		workers = 1
	}
	if capacity < 1 {
		capacity = 1
	}
	if log == nil {
		log = zap.NewNop()
	}
	p := &Pool{queue: make(chan *call.Call, capacity), capacity: int64(capacity), log: log}
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

// Reserve takes one queue slot for an async call about to be sent. It fails with
// call.ErrQueueFull when the queue is full and with call.ErrClosed once Close has begun. Safe for
// concurrent use.
func (p *Pool) Reserve() error {
	if p.closing.Load() {
		return call.ErrClosed
	}
	if p.reserved.Add(1) > p.capacity {
		p.reserved.Add(-1)
		return call.ErrQueueFull
	}
	return nil
}

// Release gives back a slot taken by Reserve for a call that was never submitted.
func (p *Pool) Release() { p.reserved.Add(-1) }

// Deliver queues a completed call whose slot was reserved; its Finish runs on a worker. It never
// blocks. Safe for concurrent use until Close.
func (p *Pool) Deliver(c *call.Call) {
	p.queue <- c
}

// Pending returns the number of reserved slots: async calls in flight or waiting for a worker.
func (p *Pool) Pending() int { return int(p.reserved.Load()) }

// Panics returns how many callbacks panicked so far.
func (p *Pool) Panics() int64 { return p.panics.Load() }

func (p *Pool) work() {
	defer p.wg.Done()
	for c := range p.queue {
		p.run(c)
	}
}

func (p *Pool) run(c *call.Call) {
	defer func() {
		p.reserved.Add(-1)
		if r := recover(); r != nil {
			p.panics.Add(1)
			p.log.Error("async callback panicked", zap.Any("panic", r), zap.Stack("stack"))
		}
	}()
	c.Finish(c)
}

// Close refuses new reservations, waits until every reserved slot has been delivered and run,
// then stops the workers and waits for them. The owner must first make sure every reservation
// ends (the Communicator closes its net threads, which completes every call). Calling Close
// again does nothing.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		p.closing.Store(true)
		for p.reserved.Load() > 0 {
			time.Sleep(200 * time.Microsecond)
		}
		close(p.queue)
	})
	p.wg.Wait()
}
