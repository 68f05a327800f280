package servantproxy

import (
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// asyncBackup is one async (or future) call of an idempotent function with its backup request:
// the rules of the sync race (backup.go) without a waiting goroutine. The primary call c is
// submitted as usual, but its Notify is end instead of the async pool's Deliver; a timer sends
// the backup c2 after the servant's backup delay if c has not ended; the first reply of the two
// (or the last failure) is delivered to the pool as the call's one outcome, and the other is
// abandoned, or recycled here if it ended too. Cancelling the context ends both.
//
// Exactly one outcome reaches the pool (the reservation async1 took is spent once): every path
// that delivers sets done under mu, and every path checks it first.
type asyncBackup struct {
	p  *proxy
	t  *netthread.Thread
	h  *objectproxy.Backup
	b  *backup
	c  *call.Call // the primary; gen its use
	c2 *call.Call // the backup, nil until sent; gen2 its use

	mu     sync.Mutex
	gen    uint64
	gen2   uint64
	start  int64       // c's Start: the outcome's, when the backup's is delivered
	spare  *call.Call  // holds a copy of c's frame until the backup is sent or not needed
	timer  *time.Timer // sends the backup; nil once stopped or fired
	failed *call.Call  // the one of the two that ended with a transport error, while the other may answer
	done   bool        // the outcome was delivered (or the call was taken back by async1)
}

// newAsyncBackup wraps c, prepared by async1 with its callback fields set, when the servant
// sends backups for c's function; nil otherwise. It must be called before c is submitted.
func (p *proxy) newAsyncBackup(c *call.Call, t *netthread.Thread) *asyncBackup {
	b := p.backup
	if b == nil || !b.eligible(c.Func) || c.Hashed { // a hashed call keeps its endpoint (affinity)
		return nil
	}
	obj, ok := c.Dest.(*objectproxy.ObjectProxy)
	if !ok {
		return nil
	}
	a := &asyncBackup{p: p, t: t, h: obj.NewBackup(), b: b, c: c, gen: c.Gen(), start: c.Start}
	a.h.Sent = b.routed
	c.Dest = a.h
	c.Pair = a.h.Pair() // the pair counts as one call
	c.Pair.Open()
	c.Notify = a.end
	// The backup's frame is copied now: once c is submitted its frame belongs to the loop.
	a.spare = call.Get()
	a.spare.Frame = append(a.spare.Frame[:0], c.Frame...)
	b.deposit()
	return a
}

// arm starts the backup timer once c is submitted.
func (a *asyncBackup) arm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		a.timer = time.AfterFunc(a.b.delay, a.fire)
	}
}

// abort recycles what the backup holds when async1 takes c back (Submit refused it).
func (a *asyncBackup) abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	a.dropSpare()
}

func (a *asyncBackup) dropSpare() {
	if a.spare != nil {
		call.Put(a.spare)
		a.spare = nil
	}
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// fire runs on the timer's goroutine: it sends the backup if c is still waiting, the budget
// allows one and the deadline leaves room for it. It submits the backup holding mu, which end,
// the backup's Notify, takes: that is sound because c is still on the net thread (or ending on
// its loop, end waiting for mu), so the thread does not route the backup on this goroutine
// (netthread's direct path, which could end it here, at once, with no endpoint), and end runs
// on the loop.
func (a *asyncBackup) fire() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.timer = nil
	if a.done || a.failed != nil || a.spare == nil {
		return
	}
	c, c2 := a.c, a.spare
	a.spare = nil
	now := call.Now()
	if c.Deadline-now < int64(time.Millisecond) || !a.b.take() {
		call.Put(c2)
		return
	}
	if !a.p.prepareBackup(c, c2, a.h, now) {
		a.b.refund()
		call.Put(c2)
		return
	}
	c2.Rsp, c2.Callback, c2.RawCallback = c.Rsp, c.Callback, c.RawCallback
	c2.CtxDst, c2.StDst = c.CtxDst, c.StDst
	c2.Finish, c2.OnEnd, c2.StopCancel, c2.KeepAddr = c.Finish, c.OnEnd, c.StopCancel, c.KeepAddr
	c2.Notify = a.end
	a.gen2 = c2.Gen()
	if err := a.t.Submit(c2); err != nil {
		a.h.Pair().Close()
		a.b.refund()
		call.Put(c2)
		return
	}
	a.c2 = c2
}

// end is the Notify of both calls: it runs on the loop goroutine when x ended (x is ours now).
func (a *asyncBackup) end(x *call.Call) {
	a.mu.Lock()
	if a.done {
		a.mu.Unlock()
		call.Put(x) // the other one's outcome was delivered already
		return
	}
	other := a.c2
	if x == a.c2 {
		other = a.c // nil when cancel gave c up: x's outcome is the call's
	}
	if (x.Err != nil || x.Unrun()) && other != nil && a.failed == nil {
		a.failed = x // the other may still answer (a refusal did not run: race)
		a.mu.Unlock()
		return
	}
	a.done = true
	a.dropSpare()
	switch {
	case a.failed != nil: // both ended: x is the second
		call.Put(a.failed)
		a.failed = nil
		a.b.drop(a.h)
	case other != nil: // x answered first: drop the other
		a.abandon(other)
		a.b.drop(a.h)
	}
	if x == a.c2 {
		x.Start = a.start // its elapsed time is the call's
		if x.Err == nil && !x.Unrun() {
			a.b.won.Add(1)
		}
	}
	a.mu.Unlock()
	a.p.notify(x)
}

// abandon gives up o, the call that lost: the loop recycles it when it meets it, or, if it
// ended meanwhile, end recycles it (done is set).
func (a *asyncBackup) abandon(o *call.Call) {
	gen := a.gen
	if o == a.c2 {
		gen = a.gen2
	}
	o.DropGen(gen) // not counted: the pair is one call
}

// cancel runs when the call's context ends (not at the call's own deadline: the loop ends both
// calls then). It claims the outcome if neither call has delivered one: the calls are
// abandoned and true is returned, for the caller to deliver the context's error. False means an
// outcome is on its way (or async1 took the call back): one of the calls ended and its end
// waits for mu.
func (a *asyncBackup) cancel() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return false
	}
	c := a.c
	if a.failed != c && !c.AbandonGen(a.gen) {
		return false // c ended and its end is waiting for mu: it delivers
	}
	if c2 := a.c2; c2 != nil && a.failed != c2 && !c2.AbandonGen(a.gen2) {
		// c2 ended and its end is waiting for mu (its Err is settled: it was written before
		// c2 left the pending state). If c failed already, c2's outcome is the call's (it was
		// counted, the pair's last half). If c is abandoned now, c ends last: a reply of c2 is
		// the outcome (it was counted), but a failure of c2 was not, and c will be counted
		// as cancelled: the caller gets the context's error, and end recycles c2.
		if a.failed == c {
			return false
		}
		if c2.Err == nil {
			a.c = nil // end must not wait for c
			return false
		}
		a.done = true
		a.dropSpare()
		return true
	}
	a.done = true
	a.dropSpare()
	if a.c2 != nil {
		if a.failed == a.c2 {
			call.Put(a.c2)
		} else {
			a.c2.AbandonGen(a.gen2)
		}
	}
	if a.failed == c {
		call.Put(c)
	}
	a.failed = nil
	return true
}
