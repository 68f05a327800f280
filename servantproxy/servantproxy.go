package servantproxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/asyncproc"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// Options are what a ServantProxy is built from; the Communicator fills them from its config.
type Options struct {
	Threads      []*netthread.Thread // the Communicator's net threads; at least one
	Async        *asyncproc.Pool     // runs async callbacks
	SyncTimeout  time.Duration       // default deadline of sync and one-way calls
	AsyncTimeout time.Duration       // default deadline of async calls
	// Stats counts the calls that fail before a net thread takes them (full queue, closed,
	// refused by the async bounds, deadline already passed); nil: not counted.
	Stats *stats.Shared
	// Interceptor wraps every call (tracing, metrics); nil: none, at no cost.
	Interceptor interceptor.Client
	// Push is the sink the ObjectProxies were built with (NewPushSink, objectproxy.Options.Push);
	// New binds it to the proxy, whose SetPushCallback then feeds it. nil: the proxy gets no
	// pushes.
	Push *PushSink
	// SetName makes every call a set call (TARS set routing): message type bit 0x80 and
	// status[STATUS_SETNAME_VALUE] = SetName, encoded with the request. "" for none.
	SetName string
	// MaxInflight caps the servant's calls in flight (limit.go); beyond it calls fail at once
	// with ErrOverload. 0: no limit. Limit, when set, is used instead: one Limit shared by the
	// proxies of one servant caps their calls together.
	MaxInflight int
	Limit       *Limit
	// BackupRequest, when positive, sends a call (sync, async, future) of a function in Idempotent again to
	// another endpoint when it has had no reply after that long (backup.go); BackupRatio caps
	// backups at that fraction of those calls (0: 0.1).
	BackupRequest time.Duration
	BackupRatio   float64
	Idempotent    []string
}

// ServantProxy calls one TARS servant. It is a small handle: copies share the same proxy. The
// zero value is unbound: its calls fail with an error until Communicator.StringToProxy binds it.
type ServantProxy struct {
	p *proxy
}

// Setter is implemented by generated proxies: StringToProxy hands them their ServantProxy.
type Setter interface {
	SetServantProxy(sp *ServantProxy)
}

// proxy is the shared state behind ServantProxy handles.
type proxy struct {
	// Immutable after New.
	name    string
	target  endpoint.Target
	threads []*netthread.Thread
	objs    []*objectproxy.ObjectProxy // objs[i] lives on threads[i]
	async   *asyncproc.Pool
	notify  func(*call.Call) // async.Deliver, bound once
	syncTO  time.Duration
	asyncTO time.Duration
	shared  *stats.Shared
	icpt    interceptor.Client
	setName string            // set routing: the set stamped on every call ("" for none)
	setSt   map[string]string // {STATUS_SETNAME_VALUE: setName}: the status of a set call without one of its own; read only
	limit   *Limit            // max-inflight (limit.go), shared by the servant's proxies
	backup  *backup           // backup requests (backup.go); nil: none
	finish  func(*call.Call)  // Finish of async calls: finishAsync, or with the limit's release
	push    *PushSink         // server pushes and connection events (push.go)

	rr atomic.Uint32 // first-layer round-robin over threads
}

// New builds the proxy for target over objs, the servant's ObjectProxies, one per net thread:
// objs[i] was built on o.Threads[i] (Thread.NewObjectProxy), by the caller, which alone knows
// how they are balanced and fed with endpoints, and with o.Push as their push sink.
func New(target endpoint.Target, objs []*objectproxy.ObjectProxy, o Options) (*ServantProxy, error) {
	if target.Object == "" {
		return nil, errors.New("servantproxy: empty servant name")
	}
	if len(o.Threads) == 0 {
		return nil, errors.New("servantproxy: no net thread")
	}
	if len(objs) != len(o.Threads) {
		return nil, fmt.Errorf("servantproxy: %d ObjectProxies for %d net threads", len(objs), len(o.Threads))
	}
	if o.Async == nil {
		return nil, errors.New("servantproxy: no async pool")
	}
	p := &proxy{
		name:    target.Object,
		target:  target,
		threads: o.Threads,
		objs:    objs,
		async:   o.Async,
		notify:  o.Async.Deliver,
		syncTO:  defaultTimeout(o.SyncTimeout, 3*time.Second),
		asyncTO: defaultTimeout(o.AsyncTimeout, 5*time.Second),
		shared:  o.Stats,
		icpt:    o.Interceptor,
		setName: o.SetName,
		limit:   o.Limit,
		backup:  newBackup(o.BackupRequest, o.BackupRatio, o.Idempotent),
	}
	if p.limit == nil {
		p.limit = NewLimit(o.MaxInflight)
	}
	p.finish = p.finisher()
	if p.setName != "" {
		p.setSt = map[string]string{statusSetName: p.setName}
	}
	p.push = o.Push
	if p.push == nil {
		p.push = NewPushSink() // fed by nothing: the ObjectProxies were built without it
	}
	p.push.p = p
	return &ServantProxy{p: p}, nil
}

func defaultTimeout(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Name returns the servant (object) name, e.g. "Hello.Server.GreeterObj"; "" for an unbound
// proxy.
func (s *ServantProxy) Name() string {
	if s == nil || s.p == nil {
		return ""
	}
	return s.p.name
}

// Target returns the parsed proxy string: the object and its endpoints.
func (s *ServantProxy) Target() endpoint.Target {
	if s == nil || s.p == nil {
		return endpoint.Target{}
	}
	return s.p.target
}

// errUnbound is returned by a ServantProxy (or a generated proxy) that was never bound with
// Communicator.StringToProxy.
var errUnbound = errors.New("tarscomm: proxy not bound to a servant: call Communicator.StringToProxy first")

// errNilContext is the error of a call made with a nil ctx; nothing about the call was done.
var errNilContext = errors.New("servantproxy: nil context: pass context.Background() or the caller's ctx")

// checkCall reports the arguments no call can be made with, before anything about the call is
// done: a nil ctx, and an rsp that is a typed nil (var rsp *pb.Reply), into which no reply
// can be decoded. An untyped nil rsp is allowed: the reply is not decoded.
func checkCall(ctx context.Context, rsp proto.Message) error {
	if ctx == nil {
		return errNilContext
	}
	if rsp != nil && !rsp.ProtoReflect().IsValid() {
		return fmt.Errorf("servantproxy: rsp is a nil %T: pass a message to decode the reply into (or nil to discard it)", rsp)
	}
	return nil
}

// noOptions is shared by calls without options, so that they allocate nothing for them.
var noOptions callOptions

func collect(opts []CallOption) *callOptions {
	if len(opts) == 0 {
		return &noOptions
	}
	o := new(callOptions)
	for _, f := range opts {
		if f != nil {
			f(o)
		}
	}
	return o
}

// Invoke calls fn synchronously: it sends req and unmarshals the reply into rsp. It returns when
// the reply arrives, the deadline passes (ErrTimeout), ctx ends (ctx's error), or the call fails.
func (s *ServantProxy) Invoke(ctx context.Context, fn string, req, rsp proto.Message, opts ...CallOption) error {
	if s == nil || s.p == nil {
		return errUnbound
	}
	if err := checkCall(ctx, rsp); err != nil {
		return err
	}
	return s.invokeVia(ctx, fn, req, nil, rsp, opts)
}

// TarsReply is what InvokeTars and AsyncInvokeTars decode a reply body into: a value that decodes
// itself from a TARS-encoded body, as the result types tars2tarscomm generates do.
type TarsReply interface {
	UnmarshalTars(b []byte) error
}

// InvokeTars is Invoke for TARS-encoded (.tars) interfaces: body, encoded by the caller, is
// sent as sBuffer, and the reply's sBuffer is decoded into rsp (not nil) as Invoke decodes a
// protobuf reply: a body that does not decode ends the call with a *CallError matching
// ErrDecode, which the interceptors' End sees too.
func (s *ServantProxy) InvokeTars(ctx context.Context, fn string, body []byte, rsp TarsReply, opts ...CallOption) error {
	if err := s.checkTars(ctx, rsp); err != nil {
		return err
	}
	return s.invokeVia(ctx, fn, nil, body, rsp, opts)
}

// checkTars refuses a TARS-body call that cannot be made: an unbound proxy, a nil ctx or rsp.
func (s *ServantProxy) checkTars(ctx context.Context, rsp TarsReply) error {
	switch {
	case s == nil || s.p == nil:
		return errUnbound
	case ctx == nil:
		return errNilContext
	case rsp == nil:
		return errNilTarsReply
	}
	return nil
}

var errNilTarsReply = errors.New("servantproxy: nil TarsReply: pass a value to decode the reply into")

// invokeVia makes a sync call decoding its reply into rsp, through the hooks when there are any.
func (s *ServantProxy) invokeVia(ctx context.Context, fn string, req proto.Message, body []byte, rsp any, opts []CallOption) error {
	o := collect(opts)
	if s.p.hooked(ctx, o) {
		return s.p.viaHooks(ctx, fn, o, false, false, func(ctx context.Context, o *callOptions) error {
			return s.invoke(ctx, fn, req, body, rsp, o)
		})
	}
	return s.invoke(ctx, fn, req, body, rsp, o)
}

func (s *ServantProxy) invoke(ctx context.Context, fn string, req proto.Message, body []byte, rsp any, o *callOptions) error {
	c, err := s.p.roundTrip(ctx, fn, o, codec.PacketNormal, req, body)
	if err != nil {
		return err
	}
	err = result(c, rsp)
	if err == nil || isServerError(err) {
		o.storeMeta(c)
	}
	o.ended(c)
	call.Put(c)
	return err
}

// InvokeRaw is Invoke for bodies the caller encodes itself (TARS-encoded .tars interfaces):
// body is sent as sBuffer and the reply's sBuffer is returned: the caller owns it (it is the
// buffer the reply was read into, handed over without a copy).
func (s *ServantProxy) InvokeRaw(ctx context.Context, fn string, body []byte, opts ...CallOption) ([]byte, error) {
	if s == nil || s.p == nil {
		return nil, errUnbound
	}
	if ctx == nil {
		return nil, errNilContext
	}
	o := collect(opts)
	if s.p.hooked(ctx, o) {
		var out []byte
		err := s.p.viaHooks(ctx, fn, o, false, false, func(ctx context.Context, o *callOptions) error {
			var err error
			out, err = s.invokeRaw(ctx, fn, body, o)
			return err
		})
		return out, err
	}
	return s.invokeRaw(ctx, fn, body, o)
}

func (s *ServantProxy) invokeRaw(ctx context.Context, fn string, body []byte, o *callOptions) ([]byte, error) {
	c, err := s.p.roundTrip(ctx, fn, o, codec.PacketNormal, nil, body)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = resultErr(c)
	if err == nil {
		out = c.TakeBody()
	}
	if err == nil || isServerError(err) {
		o.storeMeta(c)
	}
	o.ended(c)
	call.Put(c)
	return out, err
}

// Ping sends tars_ping, which TARS servers answer with an empty success reply.
func (s *ServantProxy) Ping(ctx context.Context, opts ...CallOption) error {
	_, err := s.InvokeRaw(ctx, "tars_ping", nil, opts...)
	return err
}

// InvokeOneway sends req as a one-way request: the server sends no reply. It returns once the
// request has been written to a connection, or with the error that prevented it.
func (s *ServantProxy) InvokeOneway(ctx context.Context, fn string, req proto.Message, opts ...CallOption) error {
	if s == nil || s.p == nil {
		return errUnbound
	}
	if ctx == nil {
		return errNilContext
	}
	return s.p.oneway(ctx, fn, collect(opts), req, nil)
}

// oneway sends a one-way request, through the hooks when there are any.
func (p *proxy) oneway(ctx context.Context, fn string, o *callOptions, req proto.Message, body []byte) error {
	if p.hooked(ctx, o) {
		return p.viaHooks(ctx, fn, o, true, false, func(ctx context.Context, o *callOptions) error {
			return p.oneway1(ctx, fn, o, req, body)
		})
	}
	return p.oneway1(ctx, fn, o, req, body)
}

func (p *proxy) oneway1(ctx context.Context, fn string, o *callOptions, req proto.Message, body []byte) error {
	c, err := p.roundTrip(ctx, fn, o, codec.PacketOneway, req, body)
	if err != nil {
		return err
	}
	err = resultErr(c)
	o.ended(c)
	call.Put(c)
	return err
}

// roundTrip makes a sync (or, with PacketOneway, one-way) call and waits for its end. The call
// holds a max-inflight slot from prepare until roundTrip returns: this is the one place a sync
// call gives it back. On a nil error the caller owns the returned call and must Put it.
func (p *proxy) roundTrip(ctx context.Context, fn string, o *callOptions, pt int8, req proto.Message, body []byte) (*call.Call, error) {
	c, t, err := p.prepare(ctx, fn, o, p.syncTO, pt, req, body)
	if err != nil {
		return nil, err
	}
	defer p.limit.release()
	if pt == codec.PacketOneway {
		c.Oneway = true
		if err := p.wait(ctx, c, t); err != nil {
			return nil, err
		}
		return c, nil
	}
	if c, err = p.await(ctx, c, t); err != nil {
		return nil, err
	}
	return c, nil
}

// AsyncInvoke sends req and returns at once; when the call ends, cb runs on one of the
// Communicator's async workers with nil (the reply is in rsp) or the call's error. cb runs
// exactly once if AsyncInvoke returns nil, and never if it returns an error (ErrQueueFull while
// asyncqueuecap callbacks wait for an async worker, or async-inflight-limit calls are
// unfinished; ErrClosed after Close). The deadline is the earlier of ctx's and the async invoke
// timeout; cancelling ctx ends the call at once and runs cb with ctx's error (watching a
// cancellable ctx costs a few allocations per call).
func (s *ServantProxy) AsyncInvoke(ctx context.Context, fn string, req, rsp proto.Message, cb func(error), opts ...CallOption) error {
	if cb == nil {
		return errors.New("servantproxy: nil callback")
	}
	if s == nil || s.p == nil {
		return errUnbound
	}
	if err := checkCall(ctx, rsp); err != nil {
		return err
	}
	return s.p.asyncCall(ctx, fn, collect(opts), req, nil, rsp, cb, nil)
}

// AsyncInvokeRaw is AsyncInvoke for caller-encoded bodies: cb receives the reply body, which it
// owns (handed over without a copy).
func (s *ServantProxy) AsyncInvokeRaw(ctx context.Context, fn string, body []byte, cb func([]byte, error), opts ...CallOption) error {
	if cb == nil {
		return errors.New("servantproxy: nil callback")
	}
	if s == nil || s.p == nil {
		return errUnbound
	}
	if ctx == nil {
		return errNilContext
	}
	return s.p.asyncCall(ctx, fn, collect(opts), nil, body, nil, nil, cb)
}

// AsyncInvokeTars is AsyncInvoke for TARS-encoded (.tars) interfaces: body is sent as sBuffer,
// and the reply's is decoded into rsp (not nil) on the async worker before the interceptors' End
// and cb run; cb gets nil or the call's error (a *CallError matching ErrDecode for a body that
// does not decode), under AsyncInvoke's rules.
func (s *ServantProxy) AsyncInvokeTars(ctx context.Context, fn string, body []byte, rsp TarsReply, cb func(error), opts ...CallOption) error {
	if cb == nil {
		return errors.New("servantproxy: nil callback")
	}
	if err := s.checkTars(ctx, rsp); err != nil {
		return err
	}
	return s.p.asyncCall(ctx, fn, collect(opts), nil, body, rsp, cb, nil)
}

// asyncCall makes an async call, through the hooks when there are any: the interceptors' End runs
// on the async worker, before the callback.
func (p *proxy) asyncCall(ctx context.Context, fn string, o *callOptions, req proto.Message, body []byte, rsp any, cb func(error), rawCB func([]byte, error)) error {
	if !p.hooked(ctx, o) {
		return p.async1(ctx, fn, o, req, body, rsp, cb, rawCB)
	}
	var (
		submitted bool
		sendErr   error // why the call was not sent, when next refused it
	)
	caller := ctx
	err := p.viaHooks(ctx, fn, o, false, true, func(ctx context.Context, o *callOptions) error {
		sendErr = p.async1(asyncCtx(caller, ctx), fn, o, req, body, rsp, cb, rawCB)
		submitted = sendErr == nil
		return sendErr
	})
	switch {
	case submitted:
		// An interceptor that failed the call after it was sent does not take the callback
		// back: it still runs once, and AsyncInvoke's promise (an error means no callback)
		// holds only for calls not sent.
		return nil
	case err == nil && sendErr != nil:
		// An interceptor swallowed the refusal of a call that was never sent: nothing will
		// call back, so the caller must hear of it here.
		return sendErr
	case err == nil:
		return &call.CallError{Servant: p.name, Func: fn, Err: errNotSent}
	}
	return err
}

// errNotSent is the error of an async call whose interceptor returned nil without calling next:
// the call was not sent, and no callback will run.
var errNotSent = errors.New("servantproxy: an interceptor returned nil without sending the call")

func (p *proxy) async1(ctx context.Context, fn string, o *callOptions, req proto.Message, body []byte, rsp any, cb func(error), rawCB func([]byte, error)) error {
	if err := p.misuse(fn, o); err != nil { // the caller's mistake, whatever the load
		return err
	}
	if err := p.async.Reserve(); err != nil {
		return p.unsent(fn, resultOfUnsent(err), err) // ErrQueueFull (asyncqueuecap, async-inflight-limit) or ErrClosed
	}
	c, t, err := p.prepare(ctx, fn, o, p.asyncTO, codec.PacketNormal, req, body)
	if err != nil {
		p.async.Release()
		return err
	}
	// From here the call holds a reservation and a max-inflight slot, and exactly one party
	// ends it, decided by the one transition of c's state out of pending (call.Call): the loop
	// (Complete: c's callback), the context watcher (AbandonGen: a carrier's callback), or this
	// function when Submit refuses c (AbandonGen: an error, no callback). Whoever ends it gives
	// both back: the finisher (p.finish) after a callback, refuse otherwise.
	c.Rsp, c.Callback, c.RawCallback = rsp, cb, rawCB
	c.CtxDst, c.StDst = o.rspCtx, o.rspSt
	c.Finish = p.finish
	if info := o.info; info != nil {
		c.OnEnd = func(c *call.Call, err error) {
			if c != nil {
				info.Endpoint, info.Ret = c.Addr, c.Ret
			}
			info.End(err)
		}
	}
	c.Notify = p.notify
	gen := c.Gen()
	bk := p.newAsyncBackup(c, t) // nil unless the servant sends backups for fn
	if watchedAsync(ctx) != nil {
		c.KeepAddr = true // the watcher names the endpoint (SentTo)
		// Cancelling ctx ends the call at once. Watching it costs a few allocations, paid only
		// by contexts that can be cancelled (a server handler's ctx is not watched: watched).
		start, deadline, onEnd := c.Start, c.Deadline, c.OnEnd
		c.StopCancel = context.AfterFunc(ctx, func() { p.cancelAsync(ctx, c, gen, bk, fn, start, deadline, onEnd, rsp, cb, rawCB) })
	}
	if err := t.Submit(c); err != nil {
		// Nobody but this function and the watcher can reach c: take it back unless the
		// watcher has already ended it.
		if c.StopCancel != nil {
			c.StopCancel()
		}
		if bk != nil {
			defer bk.abort()
		}
		if !c.AbandonGen(gen) {
			// The watcher abandoned c first: its carrier runs the callback once, with ctx's
			// error, so the call counts as accepted. It no longer touches c.
			call.Put(c)
			o.markQueued()
			return nil
		}
		call.Put(c)
		p.refuse()
		return p.unsent(fn, resultOfUnsent(err), err)
	}
	if bk != nil {
		bk.arm()
	}
	o.markQueued()
	return nil
}

// refuse gives back what an async call took (its asyncproc reservation and its max-inflight
// slot) when it ends without a callback: the caller got an error instead.
func (p *proxy) refuse() {
	p.async.Release()
	p.limit.release()
}

// cancelAsync runs when an async call's context ends. If ctx ended by its deadline and that is
// the call's own, the call is left to the loop, whose timing wheel ends it naming the endpoint
// (or, if Submit refused it, to async1, which takes it back). Otherwise, if the call (and its
// backup bk, if any) can be abandoned while still pending (the loop recycles what it meets abandoned), its
// callback runs on an async worker with the context's error, through a fresh carrier that
// inherits the call's reservation and max-inflight slot.
func (p *proxy) cancelAsync(ctx context.Context, c *call.Call, gen uint64, bk *asyncBackup, fn string, start, deadline int64, onEnd func(*call.Call, error), rsp any, cb func(error), rawCB func([]byte, error)) {
	if expiresWithCtx(ctx, deadline) {
		return
	}
	ep := c.SentTo() // c's own while the claim below succeeds: read before it
	var claimed bool
	if bk != nil {
		claimed = bk.cancel()
	} else {
		claimed = c.AbandonGen(gen)
	}
	if !claimed {
		return // completed or taken back first: its callback has run or will run, or never will
	}
	err := cancelled(ctx, p.name, fn, ep, start)
	carrier := call.Get()
	carrier.Addr = ep
	carrier.Rsp, carrier.Callback, carrier.RawCallback = rsp, cb, rawCB
	carrier.Finish = p.finish
	carrier.OnEnd = onEnd
	carrier.Err = err
	p.async.Deliver(carrier)
}

// finishAsync runs on an async worker: it decodes the reply and runs the user's callback. The
// callback runs even if the interceptors' End panics (the panic is re-raised after it, for the
// pool to log and count) or ends the goroutine (runtime.Goexit: the callback runs from a
// deferred call, then the pool replaces its worker): a call that was accepted is called back.
func finishAsync(c *call.Call) {
	if c.StopCancel != nil {
		c.StopCancel()
	}
	if c.Err == nil { // a reply came (a success or a server's error code)
		if c.CtxDst != nil {
			*c.CtxDst = c.RspCtx
		}
		if c.StDst != nil {
			*c.StDst = c.RspSt
		}
	}
	if c.RawCallback != nil {
		cb := c.RawCallback
		err := resultErr(c)
		var out []byte
		if err == nil {
			out = c.TakeBody()
		}
		ran := false
		defer func() {
			if !ran { // OnEnd ended the goroutine (runtime.Goexit): the call is still called back
				call.Put(c)
				cb(out, err)
			}
		}()
		p := ended(c, err)
		ran = true
		call.Put(c)
		cb(out, err)
		if p != nil {
			panic(p)
		}
		return
	}
	cb := c.Callback
	err := result(c, c.Rsp)
	ran := false
	defer func() {
		if !ran { // as above
			call.Put(c)
			cb(err)
		}
	}()
	p := ended(c, err)
	ran = true
	call.Put(c)
	cb(err)
	if p != nil {
		panic(p)
	}
}

// ended runs c's OnEnd, if any, and returns what it panicked with (nil if it did not).
func ended(c *call.Call, err error) (panicked any) {
	if c.OnEnd == nil {
		return nil
	}
	defer func() { panicked = recover() }()
	c.OnEnd(c, err)
	return nil
}

// prepare validates the call, picks its net thread, encodes its frame, and takes a max-inflight
// slot: on success the call holds one, which whoever ends the call gives back (roundTrip for
// sync and one-way calls; the finisher or refuse for async ones); on error it holds none. Sync
// calls are submitted in wait; async calls by async1.
func (p *proxy) prepare(ctx context.Context, fn string, o *callOptions, timeout time.Duration, pt int8, req proto.Message, body []byte) (*call.Call, *netthread.Thread, error) {
	if err := p.misuse(fn, o); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = ErrTimeout // the same error as a deadline that passes in flight
		}
		return nil, nil, p.unsent(fn, resultOfUnsent(err), err)
	}
	now := call.Now()
	if o.timeout > 0 {
		timeout = o.timeout
	}
	deadline := deadlineOf(ctx, now, timeout)
	if deadline <= now {
		return nil, nil, p.unsent(fn, stats.Timeout, ErrTimeout)
	}
	// The slot is taken before any work, so that an overloaded servant refuses a call without
	// marshalling it; the one later failure (marshal) gives it back.
	if !p.limit.acquire() {
		return nil, nil, p.unsent(fn, stats.Overload, p.limit.err)
	}

	var i int
	if n := len(p.threads); n > 1 {
		if o.hashed {
			i = int(o.hash % uint64(n))
		} else {
			i = int(p.rr.Add(1) % uint32(n))
		}
	}
	t := p.threads[i]

	c := call.Get()
	c.Deadline = deadline
	c.Dest = p.objs[i]
	c.Servant, c.Func, c.Start = p.name, fn, now
	c.Hashed, c.Hash = o.hashed, o.hash
	var mt int32
	if o.hashed {
		mt |= codec.MessageHash
	}
	mt |= o.mt
	status := o.status
	if p.setName != "" {
		mt |= codec.MessageSetName
		status = p.setStatus(status)
	}
	pkt := codec.RequestPacket{
		Version:     codec.VersionTars,
		PacketType:  pt,
		MessageType: mt,
		RequestID:   codec.RequestIDUnassigned, // the connection's AdapterProxy assigns it
		ServantName: p.name,
		FuncName:    fn,
		Buffer:      body,
		Timeout:     codec.RequestTimeout(time.Duration(deadline - now)),
		Context:     o.context,
		Status:      status,
	}
	if req == nil {
		c.Frame = codec.AppendRequest(c.Frame[:0], &pkt)
	} else {
		frame, err := appendRequestProto(c.Frame[:0], &pkt, req) // marshalled in place
		c.Frame = frame
		if err != nil {
			call.Put(c)
			p.limit.release()
			return nil, nil, p.unsent(fn, stats.Refused, fmt.Errorf("%w: %w", ErrEncode, err))
		}
	}
	return c, t, nil
}

// misuse returns the error of a call no load can make succeed: an empty function name, an
// invalid option (WithTimeout's ErrInvalidTimeout).
func (p *proxy) misuse(fn string, o *callOptions) error {
	if fn == "" {
		return errors.New("servantproxy: empty function name")
	}
	if o.timed && o.timeout <= 0 {
		return fmt.Errorf("tarscomm: %s.%s: %w, got WithTimeout(%v)", p.name, fn, ErrInvalidTimeout, o.timeout)
	}
	return nil
}

// appendRequestProto is codec.AppendRequestProto, with a panic while marshalling req (a message
// type whose marshalling panics) turned into an error: prepare then gives back what the call
// holds (its max-inflight slot, an async call's reservation) as for any marshalling error.
func appendRequestProto(dst []byte, pkt *codec.RequestPacket, req proto.Message) (frame []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			frame, err = dst, fmt.Errorf("panic: %v", p)
		}
	}()
	return codec.AppendRequestProto(dst, pkt, req)
}

// wait submits a sync (or one-way) call and waits for it to end. On a nil return the caller
// owns c and must Put it; on error c has been recycled (or handed to the loop to recycle).
func (p *proxy) wait(ctx context.Context, c *call.Call, t *netthread.Thread) error {
	done := watched(ctx)
	c.KeepAddr = done != nil // a caller that can give up names the endpoint (SentTo)
	gen := c.Gen()
	if err := t.Submit(c); err != nil {
		e := p.unsent(c.Func, resultOfUnsent(err), err)
		call.Put(c)
		return e
	}
	return p.waitSubmitted(ctx, c, gen, done) // backup.go
}

// statusSetName is the status key of a set call's set (TarsCpp's STATUS_SETNAME_VALUE, which
// its servers check).
const statusSetName = "STATUS_SETNAME_VALUE"

// setStatus returns the status map of a set call whose caller gave status: the proxy's shared
// one when status is empty, otherwise a copy of status with the set added (the caller's map is
// never changed).
func (p *proxy) setStatus(status map[string]string) map[string]string {
	if len(status) == 0 {
		return p.setSt
	}
	st := make(map[string]string, len(status)+1)
	maps.Copy(st, status)
	st[statusSetName] = p.setName
	return st
}

// unsent counts a call that failed before a net thread took it, and returns its error.
func (p *proxy) unsent(fn string, res stats.Result, err error) error {
	if p.shared != nil {
		p.shared.Record(p.name, fn, "", res, 0, 0)
	}
	return &call.CallError{Servant: p.name, Func: fn, Err: err}
}

// resultOfUnsent classifies the error of a call refused before it was queued.
func resultOfUnsent(err error) stats.Result {
	switch {
	case errors.Is(err, call.ErrQueueFull):
		return stats.QueueFull
	case errors.Is(err, call.ErrClosed):
		return stats.Closed
	case errors.Is(err, call.ErrTimeout):
		return stats.Timeout
	}
	return stats.Cancelled
}

// expiresWithCtx reports whether ctx ended by its deadline and that deadline is the call's own
// (deadline, call.Now clock), so that the loop's timing wheel will end the call.
func expiresWithCtx(ctx context.Context, deadline int64) bool {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false
	}
	d, ok := ctx.Deadline()
	if !ok {
		return false
	}
	return deadline <= addSat(addSat(call.Now(), int64(time.Until(d))), int64(time.Millisecond))
}

// cancelled is the error of a call whose caller's context ended first, naming the endpoint it
// was sent to ("" if none yet). Sync and async calls end with the same error.
func cancelled(ctx context.Context, servant, fn, endpoint string, start int64) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		err = ErrTimeout
	}
	return &call.CallError{Servant: servant, Func: fn, Endpoint: endpoint, Elapsed: time.Duration(call.Now() - start), Err: err}
}

// resultErr turns a finished call's outcome into an error: a failure says where (CallError),
// a reply with a non-zero return code is a *ServerError.
func resultErr(c *call.Call) error {
	if c.Err != nil {
		if _, ok := c.Err.(*call.CallError); ok {
			return c.Err // a cancelled async call's error, made by cancelAsync
		}
		return &call.CallError{Servant: c.Servant, Func: c.Func, Endpoint: c.Addr, Elapsed: time.Duration(call.Now() - c.Start), Err: c.Err}
	}
	if c.Ret != codec.RetOK {
		return &ServerError{Code: c.Ret, Desc: c.Desc, Endpoint: c.Addr}
	}
	return nil
}

// result is resultErr followed by unmarshalling the reply body into rsp. A body that does not
// decode ends the call with a *CallError wrapping ErrDecode; so does a panic while decoding (a
// message type whose unmarshalling panics), so that the call still ends once: its callback
// runs, its interceptors see it end.
func result(c *call.Call, rsp any) (err error) {
	if err := resultErr(c); err != nil {
		return err
	}
	if rsp == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = decodeError(c, rsp, fmt.Errorf("panic: %v", p))
		}
	}()
	switch r := rsp.(type) {
	case proto.Message:
		err = proto.Unmarshal(c.Body, r)
	case TarsReply:
		err = r.UnmarshalTars(c.Body)
	}
	if err != nil {
		return decodeError(c, rsp, err)
	}
	return nil
}

// decodeError is the error of call c whose reply body did not decode into rsp. A reply with
// return code 0 and a description says it too: TarsNode's server answers a servant's exception
// whose code is not a number with iRet 0 (NaN written as an int), an empty body and the
// exception's text in sResultDesc, and the text is what tells the caller what happened.
func decodeError(c *call.Call, rsp any, err error) error {
	err = fmt.Errorf("%w into %T: %w", call.ErrDecode, rsp, err)
	if c.Desc != "" {
		err = fmt.Errorf("%w (the reply, return code 0, said %q)", err, c.Desc)
	}
	return &call.CallError{Servant: c.Servant, Func: c.Func, Endpoint: c.Addr, Elapsed: time.Duration(call.Now() - c.Start), Err: err}
}

func isServerError(err error) bool {
	var se *ServerError
	return errors.As(err, &se)
}

func (o *callOptions) storeMeta(c *call.Call) {
	if o.rspCtx != nil {
		*o.rspCtx = c.RspCtx
	}
	if o.rspSt != nil {
		*o.rspSt = c.RspSt
	}
}
