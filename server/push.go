package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/codec"
)

// ErrConnClosed is what Push returns once the client's connection has closed: what was pushed on
// it is gone, and the client, told of the close, subscribes again on a new one.
var ErrConnClosed = errors.New("server: connection closed")

// pushFuncKey is the status key naming a push's function, as TarsCpp's
// Current::sendPushResponse writes it.
const pushFuncKey = "TARS_FUNC"

// Pusher sends packets the client did not ask for on one client connection (TARS server push): a
// ResponsePacket with request id 0 (codec.PushRequestID) whose status names the function, which a
// tarscomm client hands to the proxy's push callback (servantproxy.SetPushCallback) and a TarsCpp
// client to its tars_set_push_callback. Get one from Current.Pusher during a call and keep it as
// long as needed. Safe for concurrent use.
type Pusher struct{ cs *conn }

// Pusher returns a handle on the connection of the request being served, for pushing to its
// client now or later.
func (cur *Current) Pusher() *Pusher { return &Pusher{cs: cur.conn} }

// Push sends fn and body to the client of the request being served (see Pusher.Push).
func (cur *Current) Push(fn string, body []byte) error { return cur.Pusher().Push(fn, body) }

// ErrPushBacklog is what Push returns when the push would take the connection's unsent reply
// bytes over half of WithMaxBacklog (the other half is room for replies): those queued for its
// event loop, and those the loop handed to the socket that the socket has not taken (as the loop
// last counted them). Nothing was queued: the pusher is faster than its client reads, or than
// the loop writes. A feed is then refused rather than closed for its backlog, while its client's
// replies in flight fit the other half; a later Push is taken once the client has read. A
// connection with nothing unsent takes any push.
var ErrPushBacklog = errors.New("server: push refused: the connection's unsent bytes would exceed its backlog cap (maxbacklog, WithMaxBacklog): push more slowly")

// Push sends one packet naming fn, with body, to the client: it is queued with the connection's
// replies and written by its event loop soon after. body may be reused once Push returns. It
// fails with ErrConnClosed once the connection has closed (a packet queued just before the close
// may be lost with it), with ErrPushBacklog when its bytes would take the connection's unsent
// bytes over half of WithMaxBacklog, and with an error naming the sizes when the packet would exceed
// WithMaxPacketSize (a client with the same limit would skip it unread and drop it).
func (p *Pusher) Push(fn string, body []byte) error {
	cs := p.cs
	if cs == nil {
		return errPushUDP // a datagram's Current has no connection (udp.go)
	}
	if cs.gone.Load() {
		return ErrConnClosed
	}
	rp := codec.ResponsePacket{
		Version:    codec.VersionTars,
		PacketType: codec.PacketNormal,
		RequestID:  codec.PushRequestID,
		Buffer:     body,
		Status:     map[string]string{pushFuncKey: fn},
	}
	o := &cs.loop.s.opts
	cs.mu.Lock()
	// Pushes may take the unsent bytes to half the cap, leaving the other half to replies: a
	// connection that has nothing unsent takes any push.
	unsent, limit := cs.out.size()+int(cs.seen.Load()), o.maxBacklog/2
	if o.maxBacklog > 0 && unsent > 0 && unsent+len(body) > limit && len(body) < o.maxPacketSize {
		return cs.refusePush() // not encoded: the body alone is too much
	}
	cs.out.ready()
	start := len(cs.out.b)
	cs.out.b = codec.AppendResponse(cs.out.b, &rp)
	if n := len(cs.out.b) - start; n > o.maxPacketSize {
		cs.out.b = cs.out.b[:start]
		cs.mu.Unlock()
		return fmt.Errorf("server: push %q of %d bytes exceeds max-packet-size %d", fn, n, o.maxPacketSize)
	}
	if o.maxBacklog > 0 && unsent > 0 && unsent+len(cs.out.b)-start > limit {
		cs.out.b = cs.out.b[:start]
		return cs.refusePush()
	}
	cs.pushed.Store(true)
	wake := !cs.queued
	cs.queued = true
	cs.mu.Unlock()
	if wake {
		cs.loop.enqueue(cs)
	}
	return nil
}

// refusePush ends a Push refused for the backlog, whose lock on cs.mu it releases: ErrPushBacklog.
// The loop's count of what the socket has not taken (seen) may be stale, as the socket drains
// without telling it: unless the loop is coming anyway, it is asked to count again (flush), at
// most once a millisecond, so that a later Push finds the room a reading client made.
func (cs *conn) refusePush() error {
	wake := false
	if !cs.queued {
		now, last := cs.loop.s.clock(), cs.recount.Load()
		wake = now-last >= int64(time.Millisecond) && cs.recount.CompareAndSwap(last, now)
	}
	cs.queued = cs.queued || wake
	cs.mu.Unlock()
	if wake {
		cs.loop.enqueue(cs)
	}
	return ErrPushBacklog
}

// Closed reports whether the connection has closed.
func (p *Pusher) Closed() bool { return p.cs == nil || p.cs.gone.Load() }

// RemoteAddr returns the client's address.
func (p *Pusher) RemoteAddr() net.Addr {
	if p.cs == nil {
		return nil
	}
	return p.cs.remote
}

// stoppingNotice is the packet Stop sends as it begins on every connection that has read TARS
// requests only (noticeStopping): a one-way reply with -9 and codec.StoppingDesc for request id
// -1, an id no client has given a request yet (they count up from 1). A tarscomm client takes
// the endpoint out of rotation on it, as on any refusal by a stopping server, so that even a
// connection on which it sends nothing meanwhile (a net thread with no call for it, an idle one
// the server closes at the end) does not dial a server gone. TarsGo's client drops a one-way
// reply in silence; TarsCpp's drops a reply for an id it does not track, with an error line. It
// is not a push: request id 0 would make a TarsCpp client without a push callback close the
// connection, failing the calls the stopping server is about to answer.
var stoppingNotice = codec.AppendResponse(nil, &codec.ResponsePacket{
	Version:    codec.VersionTars,
	PacketType: codec.PacketOneway,
	RequestID:  -1,
	Ret:        codec.RetOverload,
	ResultDesc: stoppingDesc,
})

// noticeStopping queues stoppingNotice on every connection that is being served (its TLS
// handshake and its authentication done), on each loop. Called by Stop as it begins.
func (s *Server) noticeStopping() {
	s.engineMu.RLock()
	defer s.engineMu.RUnlock()
	if s.engineDown {
		return
	}
	s.loopsMu.Lock()
	ls := make([]*loop, 0, len(s.loops))
	for _, l := range s.loops {
		ls = append(ls, l)
	}
	s.loopsMu.Unlock()
	for _, l := range ls {
		_ = l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			l.noticeStopping()
			return nil
		}))
	}
}

// form is what the requests read on a connection so far were: none yet, all TARS's (version 1),
// or at least one of another version (TUP, JSON, ...).
type form uint8

const (
	formNone form = iota
	formTars
	formOther
)

// read notes a request of iVersion v.
func (f *form) read(v int16) {
	switch {
	case v != codec.VersionTars:
		*f = formOther
	case *f == formNone:
		*f = formTars
	}
}

// noticeStopping queues stoppingNotice on l's connections whose requests so far were all TARS's
// (version 1). The notice is a TARS reply: a client in TUP mode reads every packet of its
// connection as a TUP reply, which TarsNode's does in the socket's handler, so that a packet it
// cannot read throws there and ends the Node.js process; and a connection that has sent no
// request has not said which it reads. Loop goroutine only.
func (l *loop) noticeStopping() {
	for _, cs := range l.conns {
		if cs.c == nil || cs.hs != nil || !cs.authed || cs.form != formTars {
			continue
		}
		cs.mu.Lock()
		cs.out.ready()
		cs.out.b = append(cs.out.b, stoppingNotice...)
		cs.pushed.Store(true)
		wake := !cs.queued
		cs.queued = true
		cs.mu.Unlock()
		if wake {
			l.enqueue(cs)
		}
	}
}
