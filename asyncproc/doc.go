// Package asyncproc runs the callbacks of asynchronous calls on a fixed set of dedicated worker
// goroutines (TARS's AsyncProcThread, "asyncthread" in the config), so that a slow callback never
// stalls a net thread.
//
// The queue is bounded by "asyncqueuecap" and the bound is enforced when a call is made, not when
// its reply arrives: AsyncInvoke reserves a slot with Reserve before sending, and fails with
// ErrQueueFull if none is free. A reply therefore always finds room (Deliver never blocks the
// loop and never drops), and a full queue is an error the caller sees.
//
// A callback that panics is recovered and logged; the worker goes on. Close runs the callbacks
// already queued, then stops every worker; none runs after Close returns.
//
//	p := asyncproc.New(3, 10000, logger)
//	defer p.Close()
//	if err := p.Reserve(); err != nil { return err } // ErrQueueFull or ErrClosed
//	c.Notify = p.Deliver // the loop calls it when the reply is in
package asyncproc
