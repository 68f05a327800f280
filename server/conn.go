package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/bufpool"
	"github.com/tarscomm/tarscomm/internal/inbound"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// Buffer sizes: what a loop or worker keeps between batches.
const (
	initialScratch = 4 << 10 // first reply-body scratch handed to handlers
	maxKeptBuffer  = 1 << 20 // larger buffers are dropped after use instead of kept
)

// conn is the server's state of one accepted connection, stored as the gnet.Conn's context.
type conn struct {
	loop *loop // immutable
	// remoteStr is remote's String, for the interceptors' ServerInfo: made once, in OnOpen, on a
	// server with interceptors; immutable.
	remoteStr string

	// Owned by the loop goroutine.
	c      gnet.Conn // nil once closed: never write to a Conn after OnClose
	remote net.Addr
	spare  replies                  // the reply buffers not in use by workers
	in     inbound.Assembler        // request frames from the connection's bytes
	hs     *tlsconn.ServerHandshake // a WithTLS server's connection until its handshake is over
	tlsc   *tlsconn.LoopConn        // then: what reads and writes it (c is it too); nil for TCP
	authed bool                     // the connection may be served: authenticated, or WithAuth is off
	form   form                     // what the requests read on it so far were (noticeStopping)
	big    *bigwrite.Writer         // a writer goroutine finishes a large reply: write nothing else
	held   []replies                // replies waiting, in order, for big to finish
	gone   atomic.Bool              // OnClose ran: pushes fail (push.go)
	pushed atomic.Bool              // out holds pushes the loop has not written (takePushes)
	// seen is the reply bytes handed to c and not yet in the socket (outbound, and cs.lim.held),
	// as the loop last counted them (limits.go's unsentSeen): Push adds them to the bytes queued
	// in out to refuse pushes before they reach WithMaxBacklog.
	seen atomic.Int64
	// recount is the clock (Server.clock) when a refused Push last asked the loop to count seen
	// again: it asks at most once a millisecond, so that a pusher retrying at once does not keep
	// the loop busy with recounts.
	recount atomic.Int64
	lim     connLimits // what the limits watch (limits.go)
	// handling counts the requests handed to workers whose replies are not yet queued in out
	// (limits.go: an idle connection is not closed while it is not 0).
	handling atomic.Int32

	mu     sync.Mutex // guards the following: replies from workers not yet written
	out    replies
	n      int64 // replies in out
	queued bool  // the conn is in loop.dirty
}

// loop is the server's state of one gnet event loop.
type loop struct {
	// Immutable after creation.
	s         *Server
	el        gnet.EventLoop
	flushTask gnet.Runnable

	// Owned by the loop goroutine.
	out    replies  // replies produced by one OnTraffic
	free   replies  // buffers of replies a writer goroutine finished, for the next out (bigDone)
	iov    [][]byte // scratch for a vectored write (send)
	rsp    scratch  // reply-body scratch for inline handlers
	ctxs   callCtxs // inline handlers' ctxs
	req    codec.RequestPacket
	cur    Current
	resp   codec.ResponsePacket
	batch  []*conn    // spare for dirty
	routes routeCache // last servant and function routed to
	// stamp is the clock when this OnTraffic first needed it (readAt), the time all the requests
	// of one read were received at; each OnTraffic resets it.
	stamp int64
	conns []*conn // the open connections (limits.go)

	mu        sync.Mutex // guards the following: conns with replies from workers
	dirty     []*conn
	scheduled bool // flushTask is queued on the loop

	sweepTask gnet.Runnable // checks the limits of conns (limits.go)
	sweepDue  atomic.Bool   // sweepTask is queued on the loop

	lost atomic.Bool // an inline handler ended the loop's goroutine (goexit.go)
}

// loopOf returns the state of event loop el, creating it on first use.
func (s *Server) loopOf(el gnet.EventLoop) *loop {
	s.loopsMu.Lock()
	defer s.loopsMu.Unlock()
	l := s.loops[el]
	if l == nil {
		l = &loop{s: s, el: el, rsp: newScratch()}
		l.flushTask = gnet.RunnableFunc(l.flush)
		l.sweepTask = gnet.RunnableFunc(l.sweep)
		s.loops[el] = l
	}
	return l
}

// events receives gnet's callbacks. OnBoot runs on the gnet.Run goroutine, the others on the
// event loop that owns the connection.
type events struct {
	gnet.BuiltinEventEngine
	s      *Server
	booted chan<- error
	// ticking is closed by the first OnTick (ticked), when the ticker runs; Start waits for it.
	ticking chan struct{}
	ticked  bool // OnTick's goroutine only
}

// OnBoot records the engine and the bound address and lets Start return.
func (e *events) OnBoot(eng gnet.Engine) gnet.Action {
	s := e.s
	var addr net.Addr
	var err error
	if s.ln != nil {
		addr = s.ln.Addr() // a stream server's own listener (accept.go)
	} else if addr, err = listenAddr(eng); err != nil {
		e.booted <- err
		return gnet.Shutdown
	}
	if s.udp && s.opts.workers > 0 {
		if err := s.openReplySocket(eng); err != nil {
			e.booted <- err
			return gnet.Shutdown
		}
	}
	if ua, ok := addr.(*net.TCPAddr); ok && s.udp {
		addr = &net.UDPAddr{IP: ua.IP, Port: ua.Port, Zone: ua.Zone}
		s.udp6 = ua.IP.To4() == nil
	}
	s.mu.Lock()
	s.eng, s.addr = eng, addr
	s.addrStr.Store(new(addr.String()))
	s.mu.Unlock()
	e.booted <- nil
	return gnet.None
}

// OnShutdown runs when the engine begins to shut down, before the loops exit and their pollers
// close: from now on workers must not Execute on the loops.
func (e *events) OnShutdown(gnet.Engine) {
	s := e.s
	s.engineMu.Lock()
	s.engineDown = true
	s.engineMu.Unlock()
}

// listenAddr returns the address of the engine's listener.
func listenAddr(eng gnet.Engine) (net.Addr, error) {
	fd, err := eng.Dup()
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd) //nolint:errcheck // a dup we only read
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return nil, err
	}
	switch sa := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(append([]byte(nil), sa.Addr[:]...)), Port: sa.Port}, nil
	case *syscall.SockaddrInet6:
		a := &net.TCPAddr{IP: net.IP(append([]byte(nil), sa.Addr[:]...)), Port: sa.Port}
		if sa.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(sa.ZoneId)); err == nil {
				a.Zone = ifi.Name
			}
		}
		return a, nil
	case *syscall.SockaddrUnix:
		return &net.UnixAddr{Net: "unix", Name: sa.Name}, nil
	}
	return nil, syscall.EAFNOSUPPORT
}

// OnOpen attaches a conn to c, or refuses c once Stop began (unless the accept loop took it
// before).
func (e *events) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	s := e.s
	cs := &conn{loop: s.loopOf(c.EventLoop()), c: c, in: inbound.Assembler{Max: s.opts.maxPacketSize, Budget: s.budget, Head: requestHead},
		authed: s.opts.authKeys == nil}
	cs.remote = cloneAddr(c.RemoteAddr())
	if s.icpt != nil {
		cs.remoteStr = cs.remote.String()
	}
	counted := c.Context() == admitted // by the accept loop
	if s.stopping.Load() && !counted {
		return nil, gnet.Close
	}
	// A connection the accept loop took before Stop closed the listener is served all the
	// same: the calls its client wrote on it are refused with codec.StoppingDesc, which the
	// client sends elsewhere, and Stop closes it with the others. Closed here, they were lost.
	if !counted && !s.admit(cs.remote) {
		return nil, gnet.Close
	}
	if s.opts.tls != nil {
		cs.hs = tlsconn.StartServer(s.tlsStop, c, s.opts.tls, s.opts.handshake, &s.handshakes, s.guard,
			func(err error) { s.log.Debug("tls handshake failed", zap.Error(err)) })
	}
	c.SetContext(cs)
	cs.loop.watch(cs)
	return nil, gnet.None
}

// cloneAddr copies a TCP address: gnet recycles the memory of an address's zone when the
// connection closes, and a handler may still hold Current.RemoteAddr.
func cloneAddr(a net.Addr) net.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		return &net.TCPAddr{IP: append(net.IP(nil), t.IP...), Port: t.Port, Zone: strings.Clone(t.Zone)}
	}
	return a
}

// OnClose forgets the gnet.Conn: replies that arrive later are dropped.
func (e *events) OnClose(c gnet.Conn, err error) gnet.Action {
	if cs, ok := c.Context().(*conn); ok {
		cs.gone.Store(true)
		cs.c = nil
		if cs.big != nil {
			cs.big.Stop() // its goroutine ends and gives the buffer back (bigDone)
			cs.big = nil
		}
		for i := range cs.held {
			cs.held[i].free()
		}
		cs.held = nil
		// A kept Pusher keeps cs: it holds no reply buffer from now on. Replies and pushes
		// queued later are dropped by flush, which keeps none either.
		cs.spare.free()
		cs.spare = replies{}
		cs.mu.Lock()
		cs.out.free()
		cs.out = replies{}
		cs.mu.Unlock()
		cs.in.Reset()
		c.SetContext(nil)
		cs.loop.forget(cs)
		if cs.hs != nil {
			cs.hs.Close()
		}
		if cs.tlsc != nil {
			err = cs.tlsc.Cause(err)
		}
	}
	if err != nil {
		e.s.log.Debug("connection closed", zap.Error(err))
	}
	return gnet.None
}

// OnTraffic serves every complete frame buffered on c (gnet does not signal leftover frames
// again until more bytes arrive) and writes their replies with one Write. A large request
// arriving over many reads is moved into its own buffer as it arrives (internal/inbound): each
// OnTraffic costs what one read returned. A bad length or an undecodable packet closes the
// connection.
func (e *events) OnTraffic(c gnet.Conn) gnet.Action {
	if e.s.udp {
		l := e.s.loopOf(c.EventLoop())
		a := l.datagram(c)
		l.rsp.park() // the loop waits for the next read: it holds no large buffer meanwhile
		return a
	}
	cs, ok := c.Context().(*conn)
	if !ok {
		return gnet.Close
	}
	a := e.stream(c, cs)
	cs.loop.rsp.park()
	return a
}

// stream is OnTraffic on a stream connection.
func (e *events) stream(c gnet.Conn, cs *conn) gnet.Action {
	cs.lim.active = true // not idle (limits.go)
	cs.loop.stamp = 0
	var tlsErr error
	if cs.hs != nil {
		lc, err := cs.hs.Feed()
		switch {
		case err != nil:
			return gnet.Close
		case lc == nil:
			return gnet.None // the handshake goes on
		}
		cs.hs, cs.tlsc, cs.c = nil, lc, lc
		if !cs.authed {
			cs.lim.authBy = time.Now().Add(e.s.opts.handshake)
		}
	}
	if cs.tlsc != nil {
		tlsErr = cs.tlsc.Pump() // decrypt; the frames below are read from the plaintext
		c = cs.tlsc
	}
	l := cs.loop
	l.out.b = l.out.b[:0]
	action := gnet.None
	if tlsErr != nil {
		l.s.log.Debug("tls: connection ends", zap.Error(tlsErr), zap.Stringer("remote", cs.remote))
		action = gnet.Close
	}
	for {
		frame, owned, err := cs.in.Next(c)
		if ov, ok := err.(*inbound.Oversized); ok && l.answerOversized(cs, ov) { // not errors.As: no allocation per frame
			continue
		}
		if err != nil {
			l.s.log.Debug("bad frame, closing", zap.Error(err), zap.Stringer("remote", cs.remote))
			action = gnet.Close
			break
		}
		if frame == nil {
			break
		}
		if !cs.authed {
			if !l.authenticate(cs, frame, owned) {
				action = gnet.Close
				break
			}
			continue
		}
		if !l.serve(cs, frame, owned) {
			action = gnet.Close
			break
		}
		if m := l.s.opts.maxBacklog; m > 0 && l.out.size() > m {
			l.capped(cs, l.out.size()) // before this read's replies take more memory
			l.dropOut()
			return gnet.Close
		}
	}
	if len(l.out.b) > 0 {
		handed, err := l.send(cs, c, &l.out)
		switch {
		case handed:
			l.out, l.free = l.free, replies{}
		case cap(l.out.b) > maxKeptBuffer:
			bufpool.Put(l.out.b)
			l.out.b = nil
		}
		if err != nil {
			return gnet.Close // after a failed write gnet closed c already; after errBacklog this closes it
		}
	}
	return action
}

// requestHead is the Assembler's check of an oversized request's first bytes
// (inbound.Assembler.Head).
func requestHead(head []byte, length int) (int, error) {
	var p codec.RequestPacket
	return codec.DecodeRequestHead(head, length, &p)
}

// answerOversized answers the request longer than WithMaxPacketSize whose first bytes ov holds
// (the Assembler skips the rest, unread) with RetServerDecode naming the sizes, or not at all if
// it is one-way, and reports whether the connection goes on: false if the head does not read as
// a request's, or the connection is not yet authenticated. The client's other calls on the
// connection go on; before, it was closed under them.
func (l *loop) answerOversized(cs *conn, ov *inbound.Oversized) bool {
	if !cs.authed {
		return false
	}
	req := &l.req
	*req = codec.RequestPacket{}
	if _, err := codec.DecodeRequestHead(ov.Head, ov.Length, req); err != nil {
		return false
	}
	cs.form.read(req.Version)
	l.s.log.Debug("request exceeds max-packet-size, answered and skipped", zap.Int("bytes", ov.Length),
		zap.Int("limit", ov.Max), zap.Int32("request_id", req.RequestID), zap.Stringer("remote", cs.remote))
	if req.PacketType != codec.PacketOneway {
		desc := fmt.Sprintf("server: request of %d bytes exceeds max-packet-size %d", ov.Length, ov.Max)
		l.out.b = appendReply(l.out.b, &l.resp, req, codec.RetServerDecode, desc, nil, nil)
	}
	*req = codec.RequestPacket{}
	return true
}

// serve handles one frame: it answers it at once (inline handler, error, ping) into l.out, or
// hands it to a worker. An owned frame (a bufpool buffer) is the server's to recycle, or to
// hand to the worker with the job. It returns false if the frame is not a decodable request.
func (l *loop) serve(cs *conn, frame []byte, owned bool) bool {
	s := l.s
	if s.jobs != nil {
		return l.dispatch(cs, cs.remote, frame, owned)
	}
	if owned {
		defer bufpool.Put(frame) // after the reply, which may echo the request, is encoded
	}
	req := &l.req
	*req = codec.RequestPacket{}
	servantName, fn, err := decodeRequest(frame, req)
	if err != nil {
		s.log.Debug("undecodable request, closing", zap.Error(err), zap.Stringer("remote", cs.remote))
		*req = codec.RequestPacket{} // its body is a view of frame: an idle loop must not keep it
		return false
	}
	cs.form.read(req.Version)
	oneway := req.PacketType == codec.PacketOneway
	h, ret, desc := s.route(req, servantName, fn, &l.routes)
	stopped := h != nil && s.stopping.Load()
	if stopped {
		h, ret, desc = nil, codec.RetOverload, stoppingDesc
		s.refused(req)
	}
	if h == nil {
		switch {
		case !oneway:
			l.out.b = appendReply(l.out.b, &l.resp, req, ret, desc, nil, nil)
		case stopped:
			l.out.b = appendOnewayRefusal(l.out.b, &l.resp, req)
		}
		*req = codec.RequestPacket{} // as below: an idle loop keeps no view of the frame (80 MiB held before)
		return true
	}
	// The read's stamp is taken before a handler runs (this request needs it or not): the later
	// requests of the read count their timeouts from the read, not from this handler's end.
	l.readAt()
	cur := &l.cur
	l.fillCurrent(cur, req, cs.remote)
	cur.conn = cs
	body, ret, desc := l.invokeInline(nil, cs, h, cur)
	l.takePushes(cs)
	taken := !oneway && l.out.add(&l.resp, req, ret, desc, body, cur, l.rsp.b, s.opts.maxPacketSize)
	if taken {
		s.bodiesTaken.Add(1)
	}
	l.rsp.next(len(body), taken)
	*cur = Current{}
	*req = codec.RequestPacket{}
	return true
}

// takePushes moves the pushes waiting in cs.out (Pusher.Push queues them there for the loop's
// flush task, which runs after this read) into l.out, so that what an inline handler pushed
// reaches the client before its reply, as in worker mode, where both share cs.out (and as in
// TarsCpp, whose pushes and replies share one send queue). One atomic load when nothing was
// pushed.
func (l *loop) takePushes(cs *conn) {
	if !cs.pushed.Load() {
		return
	}
	cs.mu.Lock()
	if len(cs.out.large) == 0 { // inline mode: out holds pushes only
		cs.seen.Add(int64(len(cs.out.b))) // what Push counts: on its way to the socket now
		l.out.b = append(l.out.b, cs.out.b...)
		cs.out.b = cs.out.b[:0]
		cs.out.park()
		cs.pushed.Store(false)
	}
	cs.mu.Unlock()
}

// readAt returns the server's clock when this OnTraffic read its bytes: taken once per read, by
// the first request that needs it (a client's timeout to count, a queue wait to bound) or, in
// inline mode, before the read's first handler runs; the time every request of the read was
// received at.
func (l *loop) readAt() int64 {
	if l.stamp == 0 {
		l.stamp = max(l.s.clock(), 1)
	}
	return l.stamp
}

// stoppingDesc describes the refusal of a request that arrives after Stop began. A tarscomm
// client sends a request refused so to another endpoint: it was not run.
const stoppingDesc = codec.StoppingDesc

// dispatch decodes frame, which came from remote, into a job and queues it for the workers, or
// answers at once into l.out when there is no handler, the server is stopping or the queue is
// full. cs is the frame's connection; nil for a datagram, whose worker replies to remote (a
// *net.UDPAddr the job may keep).
func (l *loop) dispatch(cs *conn, remote net.Addr, frame []byte, owned bool) bool {
	s := l.s
	j := getJob()
	if owned {
		j.frame = frame // the job owns it: putJob recycles it
	}
	req := &j.req
	servantName, fn, err := decodeRequest(frame, req)
	if err != nil {
		putJob(j)
		s.log.Debug("undecodable request", zap.Error(err), zap.Stringer("remote", remote))
		return false
	}
	if cs != nil {
		cs.form.read(req.Version)
	}
	h, ret, desc := s.route(req, servantName, fn, &l.routes)
	if !owned {
		// The body is a view into gnet's buffer, which is reused when OnTraffic returns.
		j.body = append(j.body[:0], req.Buffer...)
		req.Buffer = j.body
	}
	stopped := false
	if h != nil {
		// Count before checking stopping, so that Stop either sees the request in flight or
		// the request sees Stop.
		s.inflight.Add(1)
		if stopped = s.stopping.Load(); stopped {
			s.done(1)
			h, ret, desc = nil, codec.RetOverload, stoppingDesc
			s.refused(req)
		} else {
			j.h, j.cs = h, cs
			if cs == nil {
				j.to = remote.(*net.UDPAddr)
			}
			l.fillCurrent(&j.cur, req, remote)
			j.cur.conn = cs
			if s.opts.queueTimeout > 0 { // WithQueueTimeout (worker.go)
				j.due = s.due(l.readAt(), req.Timeout)
			}
			busy := cs != nil && s.opts.idle > 0 // the idle rule must see the handler (limits.go)
			if busy {
				cs.handling.Add(1)
			}
			if s.queue(j, len(frame)) { // WithQueueBytes
				select {
				case s.jobs <- j:
					return true
				default:
					s.unqueue(j)
				}
			}
			if busy {
				cs.handling.Add(-1)
			}
			s.done(1)
			h, ret, desc = nil, codec.RetOverload, "server queue is full"
			s.lim.queueFull.Add(1)
			s.refused(req)
		}
	}
	switch {
	case req.PacketType != codec.PacketOneway:
		l.out.b = appendReply(l.out.b, &l.resp, req, ret, desc, nil, nil)
	case stopped && cs != nil:
		l.out.b = appendOnewayRefusal(l.out.b, &l.resp, req)
	}
	putJob(j)
	return true
}

// appendOnewayRefusal appends to b a reply to req, a one-way request refused because the server
// is stopping, which a tarscomm client reads as "this endpoint is leaving" (adapterproxy's
// reply): a one-way call gets no reply otherwise, and a client sending only one-way calls would
// go on sending them here, to be dropped, until Stop closes the connection. The reply is marked
// one-way, which TarsGo's client drops in silence (TarsCpp's drops a reply for an id it does not
// track, with an error line); none goes for id 0, a push's id, or a TUP request.
func appendOnewayRefusal(b []byte, rp *codec.ResponsePacket, req *codec.RequestPacket) []byte {
	if req.RequestID == codec.PushRequestID || tup(req.Version) {
		return b
	}
	fillResponse(rp, req, codec.RetOverload, stoppingDesc, nil, nil)
	rp.PacketType = codec.PacketOneway
	b = codec.AppendResponse(b, rp)
	rp.Buffer, rp.Context, rp.Status = nil, nil, nil
	return b
}

// enqueue marks cs as having replies to write and wakes the loop if it is not already due to
// flush. Called by workers.
func (l *loop) enqueue(cs *conn) {
	l.mu.Lock()
	l.dirty = append(l.dirty, cs)
	wake := !l.scheduled
	l.scheduled = true
	l.mu.Unlock()
	if !wake {
		return
	}
	s := l.s
	s.engineMu.RLock()
	defer s.engineMu.RUnlock()
	if s.engineDown {
		return // the connections are closing: the replies cannot be delivered
	}
	if err := l.el.Execute(context.Background(), l.flushTask); err != nil {
		s.log.Debug("dropping replies", zap.Error(err))
	}
}

// flush writes the replies workers left on each dirty conn, one Write per conn. It runs on the
// loop goroutine.
func (l *loop) flush(context.Context) error {
	l.mu.Lock()
	batch := l.dirty
	l.dirty = l.batch
	l.scheduled = false
	l.mu.Unlock()

	var n int64
	for _, cs := range batch {
		cs.mu.Lock()
		out, k := cs.out, cs.n
		// The spare becomes out: it is out's alone now (a close during the write below frees
		// out, and must not find the buffer in spare too).
		cs.out, cs.n, cs.queued, cs.spare = cs.spare, 0, false, replies{}
		cs.pushed.Store(false)
		cs.seen.Add(int64(out.size())) // what Push counts: on its way to the socket now
		cs.mu.Unlock()
		handed := false
		if cs.c != nil && out.size() == 0 {
			// Only a push refused on a stale count asked for the loop (Push): count again.
			l.unsentSeen(cs, cs.c)
			cs.spare = out
			cs.spare.park()
			n += k
			continue
		}
		if cs.c != nil {
			var err error
			// On a failed write gnet closes the conn and calls OnClose; errBacklog closes it here.
			if handed, err = l.send(cs, cs.c, &out); err != nil && cs.c != nil {
				_ = cs.c.Close()
			}
		} else {
			out.free() // the connection is gone: its replies are dropped, and it keeps no buffer
			n += k
			continue
		}
		switch {
		case handed:
			cs.spare, l.free = l.free, replies{}
		case cap(out.b) <= maxKeptBuffer:
			cs.spare = replies{b: out.b[:0], large: out.large}
		default:
			bufpool.Put(out.b)
			cs.spare = replies{large: out.large}
		}
		if cs.c == nil { // closed by the write (OnClose ran in it): keep nothing
			cs.spare.free()
			cs.spare = replies{}
		}
		cs.spare.park() // an idle connection holds no batch-sized buffer
		n += k
	}
	clear(batch)
	l.batch = batch[:0]
	if n > 0 {
		l.s.done(n)
	}
	return nil
}

// peerLine logs a line a peer can make the server repeat at will (a refused authentication, a
// connection closed for not reading its replies), of kind: at lvl once a second at most per
// kind, with the count of those left out since; the others at Debug.
func (s *Server) peerLine(lvl zapcore.Level, kind, msg string, fields ...zap.Field) {
	if ok, left := s.peerLines.Allow(kind); ok {
		s.log.Log(lvl, msg, append(fields, zap.Uint64("suppressed", left))...)
		return
	}
	s.log.Debug(msg, fields...)
}

// authenticate checks frame, the first packet of a WithAuth server's connection: an auth
// request with good credentials is answered into l.out and the connection may be served from
// now on. It returns false, to close the connection, for anything else.
func (l *loop) authenticate(cs *conn, frame []byte, owned bool) bool {
	s := l.s
	if owned {
		defer bufpool.Put(frame)
	}
	req := &l.req
	*req = codec.RequestPacket{}
	defer func() { *req = codec.RequestPacket{} }()
	if err := codec.DecodeRequest(frame, req); err != nil {
		s.peerLine(zapcore.InfoLevel, "auth undecodable", "auth: undecodable first packet, closing", zap.Error(err), zap.Stringer("remote", cs.remote))
		return false
	}
	if !auth.IsRequest(req) {
		s.peerLine(zapcore.InfoLevel, "auth missing", "auth: first packet is not an auth request, closing", zap.String("func", req.FuncName),
			zap.String("servant", req.ServantName), zap.Stringer("remote", cs.remote))
		return false
	}
	st := auth.StateWrongObj
	if _, ok := s.servants[req.ServantName]; ok {
		st = auth.Verify(req.Buffer, req.ServantName, s.opts.authKeys, time.Now())
	}
	if st != auth.StateOK {
		s.peerLine(zapcore.InfoLevel, "auth "+st.String(), "auth: refused, closing", zap.Stringer("state", st), zap.String("servant", req.ServantName),
			zap.Stringer("remote", cs.remote))
		return false
	}
	l.out.b = auth.AppendResponse(l.out.b, req)
	cs.authed = true
	return true
}

// guard runs f, a call on a connection from another goroutine (a TLS handshake's), unless the
// engine is shutting down: gnet would then write to a closed poller.
func (s *Server) guard(f func()) {
	s.engineMu.RLock()
	defer s.engineMu.RUnlock()
	if !s.engineDown {
		f()
	}
}
