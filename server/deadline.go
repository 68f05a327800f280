package server

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/internal/handlerctx"
)

// callCtx is the ctx a handler gets: its parent (its loop's or worker's child of the server's
// ctx, with the dyeing key when dyed) and, for a request that carries its client's timeout
// (iTimeout), the time the client stops waiting, counted from when the loop read the request
// (a request without one has no deadline: due is noDue). A tarscomm client called with it
// sends no longer a timeout than what is left (servantproxy takes the earlier of its own timeout
// and ctx's deadline), so a chain of calls gives up together, as TarsGo's "timeout delivery" does.
//
// It ends at its deadline, when the handler returns (end), or with its parent (Stop giving up),
// as TarsGo's and gRPC's do. Deadline and Value cost nothing, and Err costs a clock reading; the
// timer that closes Done is made by the first Done (or by an Err once the ctx has ended or
// expired), so a handler that never asks pays no timer. A tarscomm call made with it, or with a
// ctx made from it by adding values, does not ask (internal/handlerctx): relaying a request
// costs no timer either.
type callCtx struct {
	parent context.Context
	srv    *Server                  // its epoch is the origin of due
	due    int64                    // the deadline on the server's clock (Server.clock)
	timed  atomic.Pointer[timedCtx] // made on first need; then the ctx's Done, Err and Value
	ended  atomic.Bool              // the handler returned
}

// timedCtx is the real context behind a callCtx once one is needed: the parent with the
// deadline, cancelled when the handler returns.
type timedCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// callCtxs hands out the ctxs of one loop's or one worker's handlers. Their parent is a child of
// the server's ctx of the owner's own (base), so that the timers of many handlers' ctxs do not
// all register with, and lock, the one server ctx. A callCtx is carved from a block of
// callCtxBlock, one allocation per block instead of one per request, and never reused: a block
// is freed by the collector once none of its ctxs is referenced (a handler that keeps its ctx
// keeps its block).
type callCtxs struct {
	block  []callCtx
	base   context.Context
	cancel context.CancelFunc // never called: base ends with the server's ctx
}

// parent returns the owner's child of s's ctx, made on first use (s.baseCtx is set by Start).
func (a *callCtxs) parent(s *Server) context.Context {
	if a.base == nil {
		a.base, a.cancel = context.WithCancel(s.baseCtx)
	}
	return a.base
}

// noDue is the due of a request without a timeout: its ctx has no deadline.
const noDue = math.MaxInt64

// callCtxBlock is the number of callCtx in a block (3 KiB).
const callCtxBlock = 64

// next returns the ctx of a request handled by s with parent, due on s's clock (noDue: none).
func (a *callCtxs) next(parent context.Context, s *Server, due int64) *callCtx {
	if len(a.block) == 0 {
		a.block = make([]callCtx, callCtxBlock)
	}
	c := &a.block[0]
	a.block = a.block[1:]
	c.parent, c.srv, c.due = parent, s, due
	return c
}

// Deadline returns when the client stops waiting, if it sent a timeout.
func (c *callCtx) Deadline() (time.Time, bool) {
	if c.due == noDue {
		return time.Time{}, false
	}
	return c.srv.epoch.Add(time.Duration(c.due)), true
}

// Done is closed at the deadline, when the handler returns, or when the parent ends.
func (c *callCtx) Done() <-chan struct{} { return c.get().ctx.Done() }

// Err is nil until Done is closed. It needs no timer while the deadline is ahead and the handler
// has not returned: it is then the parent's.
func (c *callCtx) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Err()
	}
	if !c.ended.Load() && c.srv.clock() < c.due {
		return c.parent.Err()
	}
	return c.get().ctx.Err() // ended or expired: context.Cause must see it too
}

// DoneAsked reports whether Done was asked for (internal/handlerctx): until then no ctx that can
// end on its own was made from this one, and the calls made with it, or with a ctx made from it
// by adding values, take its deadline and do not watch it.
func (c *callCtx) DoneAsked() bool { return c.timed.Load() != nil }

// StopDone is closed when the server's Stop gives up and cancels its handlers' ctxs (the
// parent's Done: one channel per loop or worker, no timer).
func (c *callCtx) StopDone() <-chan struct{} { return c.parent.Done() }

// Value is c for handlerctx.Key, else the parent's value for key; once the timer is made, the
// timed context answers (context.Cause and the context package's own lookups find it there).
func (c *callCtx) Value(key any) any {
	if key == (handlerctx.Key{}) {
		return c
	}
	if t := c.timed.Load(); t != nil {
		return t.ctx.Value(key)
	}
	return c.parent.Value(key)
}

func (c *callCtx) String() string {
	d, ok := c.Deadline()
	if !ok {
		return "server.callCtx(no deadline)"
	}
	return "server.callCtx(deadline " + d.String() + ")"
}

// get returns the timed context, making it on first use: the parent with the deadline if any, cancelled
// at once if the handler has returned. Whoever stores it first wins, and a loser stops its own
// timer; end sets ended before it looks for the winner, and the winner looks at ended after it
// stored itself, so one of them cancels it.
func (c *callCtx) get() *timedCtx {
	if t := c.timed.Load(); t != nil {
		return t
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if d, ok := c.Deadline(); ok {
		ctx, cancel = context.WithDeadline(c.parent, d)
	} else {
		ctx, cancel = context.WithCancel(c.parent)
	}
	t := &timedCtx{ctx: ctx, cancel: cancel}
	if !c.timed.CompareAndSwap(nil, t) {
		cancel()
		return c.timed.Load()
	}
	if c.ended.Load() {
		cancel()
	}
	return t
}

// end ends the ctx: its handler has returned. It stops the timer if one was made.
func (c *callCtx) end() {
	c.ended.Store(true)
	if t := c.timed.Load(); t != nil {
		t.cancel()
	}
}
