// Package asyncproc runs the callbacks of asynchronous calls on a fixed set of dedicated worker
// goroutines (TARS's AsyncProcThread, "asyncthread" in the config), so that a slow callback never
// stalls a net thread.
//
// # Bounds
//
// "asyncqueuecap" bounds the callbacks waiting for a worker, as in TarsCpp, and it is enforced
// when a call is made: Reserve (called by AsyncInvoke before sending) fails with ErrQueueFull
// while QueueCap or more callbacks are waiting. A reply never finds the queue closed to it:
// Deliver never blocks the net thread and never drops a callback, even when more replies arrive
// at once than QueueCap (the calls were admitted while the queue was shorter); those wait in an
// overflow list the workers drain. The number of waiting callbacks can therefore exceed QueueCap
// by at most the number of calls in flight when it filled up.
//
// "async-inflight-limit" (InFlightLimit, 0 = none, the default) bounds the async calls not yet
// finished: sent and awaiting their reply, waiting for a worker, or running their callback.
// Reserve fails with ErrQueueFull beyond it. Events that are no calls (server pushes, a
// connection's opening and closing) are not counted by it: ReserveEvent takes a slot for a push
// whatever the calls, refused only by a full queue, and ReserveNotice for a connection event,
// which is never refused but by Close (it tells a subscriber when to subscribe again).
//
// # Panics and Close
//
// A callback that panics is recovered and logged (one line a second at most, saying how many it
// stands for; Pool.Panics counts them all); the worker goes on. One that ends its goroutine
// (runtime.Goexit, t.FailNow) is logged and its worker replaced. Close refuses new reservations,
// waits until every reserved call has been delivered and its callback has run, then stops the
// workers; none runs a callback after Close returns. Close may be called from a callback (the
// Communicator's Close often is): it then does all of that except waiting for the callback that
// called it, see Pool.Close.
//
// # Callbacks that wait
//
// A callback that waits for a future (Wait, through a tarscomm future's Get or Join) or for a
// pool to close lends its worker's place to a stand-in worker, so that what it waits for, often
// another callback, can run even when every worker waits so; the stand-in stays until the
// callback returns, ready for its next waits (workers.go).
//
//	p := asyncproc.New(asyncproc.Options{Workers: 3, QueueCap: 100000, Log: logger})
//	defer p.Close()
//	if err := p.Reserve(); err != nil { return err } // ErrQueueFull or ErrClosed
//	c.Notify = p.Deliver // the loop calls it when the reply is in
package asyncproc
