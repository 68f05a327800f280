package servantproxy

import (
	"sync/atomic"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Push is a packet a server sent to this client unasked, on one of the proxy's connections
// (TARS server push: a ResponsePacket with request id 0, TarsCpp's Current::sendPushResponse,
// tarscomm's server.Current.Push).
type Push struct {
	Endpoint string // the connection's endpoint, "host:port"
	Func     string // the function the server named (status TARS_FUNC); "" if it named none
	Ret      int32  // the packet's return code
	Body     []byte // the packet's body; the callback owns it
	// Context and Status are the packet's maps (nil when empty).
	Context, Status map[string]string
}

// PushCallback receives what the servers of a ServantProxy push, and the opening and closing of
// the proxy's connections (per endpoint, one per net thread, or the servant's connections of
// them), which tell a client of pushes when to subscribe again: a server pushes on a connection,
// and what it pushed on a closed one is gone. A connection the client moves off (a server asking
// its clients to reconnect, a health probe unanswered) is reported closed at once, though it is
// still read for the replies of the calls written on it: what is pushed on it then is dropped
// and counted, not delivered after its OnClose. Each function runs on an async worker (asyncthread), never on a net thread; with more
// than one worker, or while a callback waits for a future or in a Close (conf's AsyncThread), two
// may run at once, and not necessarily in the order they arrived. A nil function is skipped.
//
// Pushes come at the rate the server chooses, and share the async workers with the callbacks of
// calls: a proxy holds at most MaxQueuedPushes pushes, of MaxQueuedPushBytes bodies in all, that
// wait for OnPush (a push always fits when none waits); the others are dropped and counted
// (Stats' PushesDropped), so that a server pushing faster than OnPush keeps up bounds the
// client's memory and leaves the async queue to the calls.
type PushCallback struct {
	OnPush    func(p *Push)
	OnConnect func(endpoint string)
	OnClose   func(endpoint string, err error)
}

// SetPushCallback makes cb receive the pushes and connection events of the proxy's connections
// from now on, on every net thread; nil stops them (events that arrived before still go to the
// callback set when they arrived: none is lost between the two). Every ServantProxy handle of the same proxy
// (Communicator.StringToProxy returns one proxy per proxy string and set) shares the callback,
// as TarsCpp's tars_set_push_callback does. Without a callback a pushed packet is logged and
// dropped, and the connection stays up (TarsCpp's client closes it). Safe for concurrent use.
func (s *ServantProxy) SetPushCallback(cb *PushCallback) {
	if s == nil || s.p == nil {
		return
	}
	s.p.push.cb.Store(cb)
}

// PushSink is a proxy's adapterproxy.PushSink: on the loop it copies what arrived into a pooled
// call and hands it to an async worker, where the callback that accepted it runs (the one set
// when it arrived: a push that arrived before SetPushCallback(nil) is still delivered, not lost). The caller that
// builds a proxy makes one with NewPushSink, builds the proxy's ObjectProxies with it
// (objectproxy.Options.Push) and hands it to New (Options.Push), which binds it to the proxy: so
// every connection has its sink from the start, and nothing is set on an ObjectProxy a loop
// may already be running.
type PushSink struct {
	// p is set by New, before the ServantProxy exists: the loop reads it only after loading a
	// callback, which only SetPushCallback on that ServantProxy stores (the atomic orders them).
	p  *proxy
	cb atomic.Pointer[PushCallback]
	// queued and queuedBytes count the pushes handed to the async workers whose OnPush has not
	// returned yet, and their bodies' bytes (MaxQueuedPushes, MaxQueuedPushBytes).
	queued, queuedBytes atomic.Int64
	// The carriers' Finish functions, bound once.
	onPush, onConnect, onClose func(*call.Call)
}

// NewPushSink returns the push sink for one proxy's ObjectProxies, to be bound by New.
func NewPushSink() *PushSink {
	s := &PushSink{}
	s.onPush, s.onConnect, s.onClose = s.finishPush, s.finishConnect, s.finishClose
	return s
}

// Bounds on the pushes of one proxy waiting for its OnPush (see PushCallback).
const (
	MaxQueuedPushes    = 512
	MaxQueuedPushBytes = 32 << 20
)

// Push implements adapterproxy.PushSink (on the loop).
func (s *PushSink) Push(a *adapterproxy.AdapterProxy, r *codec.ResponsePacket) bool {
	cb := s.cb.Load()
	if cb == nil || cb.OnPush == nil {
		return false
	}
	size := int64(len(r.Buffer))
	if n := s.queued.Load(); n > 0 && (n >= MaxQueuedPushes || s.queuedBytes.Load()+size > MaxQueuedPushBytes) {
		return false // OnPush does not keep up: dropped and counted
	}
	c := s.carrier(a, cb, s.onPush)
	if c == nil {
		return false
	}
	s.queued.Add(1)
	s.queuedBytes.Add(size)
	c.Func, c.Ret = r.Status[adapterproxy.PushFuncKey], r.Ret
	c.RspCtx, c.RspSt = r.Context, r.Status // decoded afresh for each packet
	c.SetBody(r.Buffer)
	s.p.async.Deliver(c)
	return true
}

// Connected implements adapterproxy.PushSink (on the loop).
func (s *PushSink) Connected(a *adapterproxy.AdapterProxy) {
	if cb := s.cb.Load(); cb != nil && cb.OnConnect != nil {
		if c := s.notice(a, cb, s.onConnect); c != nil {
			s.p.async.Deliver(c)
		}
	}
}

// Closed implements adapterproxy.PushSink (on the loop).
func (s *PushSink) Closed(a *adapterproxy.AdapterProxy, err error) {
	if cb := s.cb.Load(); cb != nil && cb.OnClose != nil {
		if c := s.notice(a, cb, s.onClose); c != nil {
			c.Err = err
			s.p.async.Deliver(c)
		}
	}
}

// carrier returns a call that carries a push from a's connection to an async worker, or nil
// when the pool refuses it (its queue is full, or it is closing): the push is dropped (and
// counted). The async calls in flight (async-inflight-limit) do not refuse it, nor count it.
func (s *PushSink) carrier(a *adapterproxy.AdapterProxy, cb *PushCallback, finish func(*call.Call)) *call.Call {
	if s.p.async.ReserveEvent() != nil {
		return nil
	}
	return s.carry(a, cb, finish)
}

// notice is carrier for the opening or closing of a's connection, which a full queue does not
// refuse (asyncproc.Pool.ReserveNotice): a subscriber that missed a close would never subscribe
// again. Only a closing pool refuses it.
func (s *PushSink) notice(a *adapterproxy.AdapterProxy, cb *PushCallback, finish func(*call.Call)) *call.Call {
	if s.p.async.ReserveNotice() != nil {
		return nil
	}
	return s.carry(a, cb, finish)
}

// carry makes the call that carries an event to finish, on a slot already reserved.
func (s *PushSink) carry(a *adapterproxy.AdapterProxy, cb *PushCallback, finish func(*call.Call)) *call.Call {
	c := call.Get()
	c.Servant, c.Addr, c.Finish, c.Handler = s.p.name, a.Addr(), finish, cb
	return c
}

func (s *PushSink) finishPush(c *call.Call) {
	p := &Push{Endpoint: c.Addr, Func: c.Func, Ret: c.Ret, Body: c.TakeBody(), Context: c.RspCtx, Status: c.RspSt}
	cb := c.Handler.(*PushCallback)
	call.Put(c)
	size := int64(len(p.Body))
	defer func() { // the push waits until OnPush has returned, even by a panic
		s.queued.Add(-1)
		s.queuedBytes.Add(-size)
	}()
	cb.OnPush(p)
}

func (s *PushSink) finishConnect(c *call.Call) {
	ep, cb := c.Addr, c.Handler.(*PushCallback)
	call.Put(c)
	cb.OnConnect(ep)
}

func (s *PushSink) finishClose(c *call.Call) {
	ep, err, cb := c.Addr, c.Err, c.Handler.(*PushCallback)
	call.Put(c)
	cb.OnClose(ep, err)
}
