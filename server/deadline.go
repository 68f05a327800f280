package server

import (
	"context"
	"sync/atomic"
	"time"
)

// callCtx is the ctx a handler gets for a request that carries its client's timeout (iTimeout):
// its parent (the server's base ctx, with the dyeing key when dyed) and the time the client
// stops waiting, counted from when the loop read the request. A tarscomm client called with it
// sends no longer a timeout than what is left (servantproxy takes the earlier of its own timeout
// and ctx's deadline), so a chain of calls gives up together, as TarsGo's "timeout delivery" does.
//
// It ends at the deadline, or with its parent (Stop giving up), not when the handler returns:
// work the handler starts with it, an async call say, gets the time its client gave. Deadline
// and Value cost nothing, and Err costs a clock reading; the timer that closes Done at the
// deadline is made by the first Done (or an Err past the deadline), so a handler that never asks
// pays no timer, and the server nothing once the handler returns.
type callCtx struct {
	parent context.Context
	srv    *Server                  // its epoch is the origin of due
	due    int64                    // the deadline on the server's clock (Server.clock)
	timed  atomic.Pointer[timedCtx] // made on first need; then the ctx's Done, Err and Value
}

// timedCtx is the real context behind a callCtx once one is needed: the parent with the
// deadline. Its timer ends it; the cancel func is kept only to give back a loser's timer (get).
type timedCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// callCtxs hands out callCtx values carved from blocks of callCtxBlock, one allocation per
// block instead of one per request. A callCtx is never reused: a block is freed by the collector
// once none of its ctxs is referenced (a handler that keeps its ctx keeps its block). Each loop
// and each worker has its own.
type callCtxs struct{ block []callCtx }

// callCtxBlock is the number of callCtx in a block (3 KiB).
const callCtxBlock = 64

// next returns the ctx of a request handled by s with parent, due on s's clock.
func (a *callCtxs) next(parent context.Context, s *Server, due int64) *callCtx {
	if len(a.block) == 0 {
		a.block = make([]callCtx, callCtxBlock)
	}
	c := &a.block[0]
	a.block = a.block[1:]
	c.parent, c.srv, c.due = parent, s, due
	return c
}

// Deadline returns when the client stops waiting.
func (c *callCtx) Deadline() (time.Time, bool) {
	return c.srv.epoch.Add(time.Duration(c.due)), true
}

// Done is closed at the deadline, or when the parent ends.
func (c *callCtx) Done() <-chan struct{} { return c.get().ctx.Done() }

// Err is nil until Done is closed. It needs no timer while the deadline is ahead: it is then the
// parent's.
func (c *callCtx) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Err()
	}
	if c.srv.clock() < c.due {
		return c.parent.Err()
	}
	return c.get().ctx.Err() // expired: context.Cause must see it too
}

// Value is the parent's value for key; once the timer is made, the timed context answers
// (context.Cause and the context package's own lookups find it there).
func (c *callCtx) Value(key any) any {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Value(key)
	}
	return c.parent.Value(key)
}

func (c *callCtx) String() string {
	d, _ := c.Deadline()
	return "server.callCtx(deadline " + d.String() + ")"
}

// get returns the timed context, making it on first use: the parent with the deadline. Whoever
// stores it first wins; a loser stops its own timer.
func (c *callCtx) get() *timedCtx {
	if t := c.timed.Load(); t != nil {
		return t
	}
	d, _ := c.Deadline()
	ctx, cancel := context.WithDeadline(c.parent, d)
	t := &timedCtx{ctx: ctx, cancel: cancel}
	if !c.timed.CompareAndSwap(nil, t) {
		cancel()
		return c.timed.Load()
	}
	return t
}
