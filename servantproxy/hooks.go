package servantproxy

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/cookie"
	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/carry"
	"github.com/tarscomm/tarscomm/internal/handlerctx"
	"github.com/tarscomm/tarscomm/tracekey"
)

// hooked reports whether a call must take the hooked path: the Communicator has a client
// interceptor, the call is dyed (by option or by its context), or its context carries cookies
// or a trace (a server handler's whose request had them). Calls without any pay one context
// lookup.
func (p *proxy) hooked(ctx context.Context, o *callOptions) bool {
	return p.icpt != nil || o.dyed || carry.From(ctx) != nil
}

// viaHooks runs one call through dyeing and the client interceptors (a call is dyed by its
// option, else by the caller's ctx, else by the ctx the interceptors hand to next): they see it as
// an interceptor.CallInfo, may add to its context and status maps and its message type, and
// wrap the rest; send then makes the call with what they settled. End runs once: for a sync or
// one-way call when send returns (after the reply, or once written), for an async call on the
// async worker before the callback (call.Call.OnEnd), for a call that failed before it was
// queued when send returns its error, and for a call an interceptor refused (never calling
// next) when the interceptors return.
func (p *proxy) viaHooks(ctx context.Context, fn string, o *callOptions, oneway, async bool, send func(ctx context.Context, o *callOptions) error) error {
	info := &interceptor.CallInfo{Servant: p.name, Function: fn, Oneway: oneway, Async: async,
		Context: o.context, Status: o.status}
	if async && p.icpt != nil {
		// The interceptors' End of an async call runs on an async worker, after AsyncInvoke
		// returned and the caller may reuse its maps (WithContext's promise): they see a copy.
		info.Context, info.Status = maps.Clone(o.context), maps.Clone(o.status)
	}
	carried := carry.From(ctx)
	key, dyed := o.dyeKey, o.dyed
	if !dyed && carried != nil {
		key, dyed = carried.DyeKey, carried.Dyed
	}
	if dyed {
		info.MessageType, info.Status = dye.Apply(info.MessageType, info.Status, key)
	}
	if carried != nil {
		// The cookies of the request the caller's handler serves, under the call's own entries.
		info.Status = cookie.Apply(info.Status, carried.Cookies)
		if carried.Traced && info.MessageType&tracekey.MessageType == 0 {
			// Its trace, under a new span (an interceptor that traces the call sets its own).
			info.MessageType, info.Status = tracekey.Apply(info.MessageType, info.Status, carried.TraceID)
		}
	}
	if p.icpt != nil {
		// The bits and the entry the request will carry, as the interceptors are promised
		// (prepare adds them again to what they settled).
		if o.hashed {
			info.MessageType |= codec.MessageHash
		}
		if p.setName != "" {
			info.MessageType |= codec.MessageSetName
			info.Status = p.setStatus(info.Status)
		}
	}
	// g.state: nextOpen, then nextCalled or nextClosed: next runs at most once. g.running is held
	// by an async call's next while it runs: an interceptor that returns while next still runs on
	// another goroutine (a timeout interceptor) waits for it, so that asyncCall reads one outcome.
	var g struct {
		state   atomic.Int32
		running sync.Mutex
	}
	next := func(ctx context.Context, info *interceptor.CallInfo) error {
		if async {
			g.running.Lock()
			defer g.running.Unlock()
		}
		if !g.state.CompareAndSwap(nextOpen, nextCalled) {
			return &call.CallError{Servant: p.name, Func: fn, Err: errNextAgain}
		}
		if p.icpt != nil {
			if v := carry.From(ctx); v != carried && v != nil {
				info.MessageType, info.Status = handedOn(v, dyed, info.MessageType, info.Status)
			}
		}
		oo := *o
		oo.context, oo.status, oo.mt = info.Context, info.Status, info.MessageType
		if p.icpt != nil {
			oo.info = info
		}
		err := send(ctx, &oo)
		if p.icpt != nil && !oo.queued {
			if ce := (*call.CallError)(nil); info.Endpoint == "" && errors.As(err, &ce) {
				info.Endpoint = ce.Endpoint // a call given up (its ctx ended) while sent there
			}
			info.End(err)
		}
		return err
	}
	if p.icpt == nil {
		return next(ctx, info)
	}
	returned := false
	defer func() {
		if !returned && g.state.CompareAndSwap(nextOpen, nextClosed) {
			// An interceptor panicked (or called runtime.Goexit) before the call was made: the
			// ones outside it see it end, and the panic goes on to the caller.
			info.End(errInterceptorPanicked)
		}
	}()
	err := p.icpt(ctx, info, next)
	returned = true
	if async {
		g.running.Lock() // a next still running finishes first
		defer g.running.Unlock()
	}
	if g.state.CompareAndSwap(nextOpen, nextClosed) {
		info.End(err) // an interceptor refused the call: the ones outside it see it end
	}
	return err
}

// handedOn adds to a call's message type and status what an interceptor put in the ctx it handed
// to next (dye.WithKey, cookie.WithCookies, tracekey.WithTraceID): v, that ctx's values, which
// include the caller's. A call dyed by its option (dyed) or already dyed, or traced, by an
// interceptor keeps its key; the cookies go under the call's own entries.
func handedOn(v *carry.Values, dyed bool, mt int32, status map[string]string) (int32, map[string]string) {
	if v.Dyed && !dyed && mt&dye.MessageType == 0 {
		mt, status = dye.Apply(mt, status, v.DyeKey)
	}
	status = cookie.Apply(status, v.Cookies)
	if v.Traced && mt&tracekey.MessageType == 0 {
		mt, status = tracekey.Apply(mt, status, v.TraceID)
	}
	return mt, status
}

// errInterceptorPanicked is the error the interceptors' End gets for a call whose interceptor
// panicked before it was made (the panic itself goes on to the caller).
var errInterceptorPanicked = errors.New("servantproxy: an interceptor panicked before the call was made")

// The states of a call's next (viaHooks).
const (
	nextOpen   = iota // not called yet
	nextCalled        // called: the call was made (or refused) once
	nextClosed        // the interceptors returned without calling it: the call was refused
)

// errNextAgain is what next returns to an interceptor that calls it a second time, or after the
// interceptors returned: the call is made once, and its callback runs once.
var errNextAgain = errors.New("servantproxy: an interceptor called next again, or after it returned (next runs at most once)")

// callerCancel is the ctx an async call is made with when its interceptors handed next a ctx of
// their own that ends differently (context.WithTimeout(ctx, d) with a deferred cancel, the habit
// of sync interceptors): its values and deadline are the interceptors' ctx's, but only the
// caller's ctx cancels the call. An async call outlives the interceptors' return, and a cancel
// they defer would otherwise end every such call at once.
type callerCancel struct {
	context.Context                 // the interceptors' ctx: values, deadline
	caller          context.Context // the ctx AsyncInvoke was given
}

func (c callerCancel) Done() <-chan struct{} { return c.caller.Done() }
func (c callerCancel) Err() error            { return c.caller.Err() }

// Deadline is the earlier of the two ctxs' deadlines.
func (c callerCancel) Deadline() (time.Time, bool) {
	d, ok := c.Context.Deadline()
	if cd, cok := c.caller.Deadline(); cok && (!ok || cd.Before(d)) {
		return cd, true
	}
	return d, ok
}

// AfterFunc lets context.AfterFunc watch the caller's ctx without a goroutine of its own.
func (c callerCancel) AfterFunc(f func()) func() bool { return context.AfterFunc(c.caller, f) }

// asyncCtx returns the ctx an async call is made with, given the caller's ctx and the one the
// interceptors handed to next (callerCancel). A server handler's ctx (internal/handlerctx) is
// never asked for its Done here, which would make its timer and have the call watch it: an async
// call a handler starts outlives the handler, and ends by its deadline.
func asyncCtx(caller, inner context.Context) context.Context {
	if _, ok := handlerctx.Find(caller); ok {
		if _, ok := handlerctx.Find(inner); ok {
			return inner // values added only
		}
		return callerCancel{Context: inner, caller: context.WithoutCancel(caller)}
	}
	if inner.Done() == caller.Done() { // values added only, or the caller's own ctx
		return inner
	}
	return callerCancel{Context: inner, caller: caller}
}

// markQueued records that an async call was queued, so that its End runs on the async worker.
// Only the hooked path's private copy of the options is written: the options of a call without
// options are shared by every such call.
func (o *callOptions) markQueued() {
	if o.info != nil {
		o.queued = true
	}
}

// ended records, for the interceptors, where a finished sync or one-way call went and what it
// got back.
func (o *callOptions) ended(c *call.Call) {
	if o.info != nil {
		o.info.Endpoint, o.info.Ret = c.Addr, c.Ret
	}
}
