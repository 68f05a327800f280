package netthread

import (
	"runtime"

	"github.com/tarscomm/tarscomm/internal/call"
)

// The direct path: a lone call is routed and written by its caller.
//
// Handing a call to the loop costs a wakeup: the caller writes a byte to the anchor socket, the
// loop returns from epoll_wait, reads the byte, routes the call and writes it. When calls come
// in bursts one wakeup serves the whole batch, but a lone call (a sync caller at low
// concurrency) pays it in full: two syscalls and a cross-CPU wakeup of the loop's thread before
// its request is even written, which is most of the gap between a c=1 call and a plain
// net.Conn client's.
//
// So the loop side (every ObjectProxy and AdapterProxy of the thread, the timing wheel, the
// clock, the dirty list) is guarded by a mutex, own. The loop goroutine holds it whenever it runs
// this package's code (every gnet callback and posted task: enter, exit); it is released while
// the loop waits in epoll_wait. A caller whose thread is quiet (no call waits on it: the loop
// publishes that at the end of each turn) and whose queue is empty tries the mutex; if it gets
// it, it does what the loop would have done for its call (route it, then flush), with borrowed
// set, and releases it. The reply comes back through the loop as always.
//
// Borrowed, an AdapterProxy never calls gnet (whose connection methods belong to the loop
// goroutine): it writes the lone frame to the socket with write(2) itself, and only when nothing
// of the connection waits in gnet's outbound buffer or anywhere else, so the bytes stay in order;
// anything else (a connection still connecting, a backlog, a large frame, TLS, UDP, a partial
// write's rest) it leaves to the loop, which a Resume wakes (adapterproxy/direct.go). gnet calls
// OnClose before it closes a connection's descriptor, and OnClose holds own, so a descriptor a
// borrowed write uses is still the connection's.
//
// A busy thread never takes this path: its callers see quiet unset and queue as before, so
// batching (one write for many calls) is untouched, and the loop never waits for the mutex
// unless a lone caller is mid-route.
//
// The rule that keeps this free of deadlocks: a caller takes the path only when no other call
// is on the thread (none queued, none in the wheel, which holds every routed call until it
// ends), so the only call that can end on its goroutine, inside Submit, is its own; every other
// call ends on the loop goroutine, as before. servantproxy's asyncBackup relies on it: it
// submits a backup holding the lock that the backup's Notify takes, sound only because the
// primary is on the thread then, or ending on the loop, which holds own meanwhile
// (TestDirectPathAsyncBackupAlone hangs if the path is opened while calls wait). And callers
// only try own (TryLock), never wait for it, so no caller waits on the loop while it holds a
// lock of its own.

// enter takes the loop side for the loop goroutine. It reports false when the loop goroutine
// holds it already: gnet re-enters a callback synchronously (a write that fails inside Flush
// runs OnClose), and the outer frame releases it. Loop goroutine only.
func (t *Thread) enter() bool {
	if t.loopInside {
		return false
	}
	t.own.Lock()
	t.loopInside = true
	t.enterLen = t.wheel.Len()
	return true
}

// exit ends what enter began (nothing if entered is false): it publishes whether the thread is
// quiet, then releases the loop side. Loop goroutine only.
func (t *Thread) exit(entered bool) {
	if !entered {
		return
	}
	t.publish()
	lone := t.enterLen > 0 && t.quiet.Load() // this turn ended the thread's only call
	t.loopInside = false
	t.own.Unlock()
	if lone {
		// Its caller was just made runnable on this P. Left alone, the loop goes straight back
		// to epoll_wait, a syscall that keeps the P, and the caller waits for another thread
		// to be woken and steal it (microseconds: a futex wake, the scheduler's 3 µs grace for
		// runnext). Yielding once runs the caller here and now: it routes and writes its next
		// call on the direct path before the loop waits again.
		runtime.Gosched()
	}
}

// publish tells the ticker whether the thread is idle (its wheel is empty: tick), and callers
// whether it is quiet: no call waits on it for a reply or to be written (every such call with a
// deadline is in the wheel), and at the end of the turn before at most one did. The second
// condition keeps the direct path to lone calls: when many callers share the thread, the wheel
// empties now and then as a batch of replies completes, and a caller writing its call alone
// then would only split the next batch and make the loop wait for the mutex. Holder of own
// only.
func (t *Thread) publish() {
	n := t.wheel.Len()
	q := !t.opts.NoDirect && n == 0 && t.lastLen <= 1
	t.lastLen = n
	if t.quiet.Load() != q {
		t.quiet.Store(q)
	}
	if e := n == 0; t.idle.Load() != e {
		t.idle.Store(e)
		if !e && t.tickerAsleep.Load() && t.tickerAsleep.CompareAndSwap(true, false) {
			select {
			case t.pokeTicker <- struct{}{}:
			default:
			}
		}
	}
}

// direct routes and flushes c on the caller's goroutine, which holds own.
func (t *Thread) direct(c *call.Call) {
	t.quiet.Store(false) // the others queue meanwhile: they would not get own
	t.borrowed = true
	t.now = call.Now()
	if t.rec != nil {
		c.Rec = t.onLoop()
	}
	t.counts.Direct++
	t.counts.Requests++
	c.Dest.Route(c)
	t.flush()
	t.borrowed = false
	t.publish()
}

// Borrowed reports whether a caller runs the loop side on the direct path, not the loop
// goroutine: gnet must not be called (adapterproxy.Loop).
func (l *loopSide) Borrowed() bool { return l.borrowed }
