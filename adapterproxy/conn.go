package adapterproxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/bufpool"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/inbound"
)

// Reconnect backoff after failed dials: doubling from backoffMin up to backoffMax, with up to
// 25% jitter so that many clients do not reconnect in step. The ceiling is low on purpose: a
// refused connect costs a syscall, and a server that comes back must get its traffic back
// within a fraction of a second, not after a backoff grown during its outage.
const (
	backoffMin = 25 * time.Millisecond
	backoffMax = 150 * time.Millisecond
)

// connectSlack is how long past the connect timeout a dial may stay unanswered (enrolled with
// gnet but never opened) before the AdapterProxy gives up on it and dials again.
const connectSlack = 500 * time.Millisecond

// Opened is called on the loop when the connection of dial gen is registered: it attaches the
// connection and writes what waited for it. A connection from a dial already given up on is
// closed. Must be called on the loop goroutine.
func (a *AdapterProxy) Opened(c gnet.Conn, gen uint32) {
	if gen != a.dialGen || a.state != stateConnecting {
		c.SetContext(nil)
		_ = c.Close()
		return
	}
	c.SetContext(a)
	a.conn = c
	a.attachFD(c)
	a.state = stateConnected
	a.lastIO = a.loop.Now()
	a.openedAt = a.lastIO
	a.proven = false
	a.heard = a.ep.AuthType == endpoint.AuthLocal // the peer answered the authentication
	a.handed, a.taken, a.waiting, a.lastMoved = 0, 0, 0, a.lastIO
	a.lastRead = a.lastIO // the log's since_read counts from the connect until a first read
	a.in.Reset()
	a.log.Debug("connected")
	if a.opts.Push != nil {
		a.opts.Push.Connected(a)
	}
	a.q.each(func(c *call.Call) { c.Delayed(a.lastIO) }) // they waited for the connection
	if a.health.inactive {
		a.probeAt = a.lastIO + max(a.probeEvery, int64(probeInterval)) // the backoff so far (keepalive.go)
		a.sendPing(a.lastIO, int64(probeTimeout))
		a.pingProbe = true
	}
	a.Flush()
}

// DialFailed is called on the loop when dial gen did not produce a connection: every waiting
// call is retried on another endpoint (if the servant allows retries) or fails now, and the
// next dial waits for the backoff. The outcome of a dial already given up on is ignored. Must
// be called on the loop goroutine.
func (a *AdapterProxy) DialFailed(gen uint32, err error) {
	if gen != a.dialGen || a.state != stateConnecting {
		return
	}
	if errors.Is(err, call.ErrClosed) {
		// The net thread is closing: its calls end with ErrClosed, nowhere else to go.
		a.state = stateIdle
		a.drop(err, false)
		return
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		err = &connectTimedOut{err: err, after: a.ConnectTimeout()}
	}
	now := a.loop.Now()
	a.state = stateIdle
	a.dialFails++
	a.stats.ConnFails++
	a.lastErr = err
	a.retryAt = now + int64(backoff(a.dialFails))
	a.health.connectFailed(now)
	a.warn("connect failed", zap.Error(err), zap.Int("consecutive", a.dialFails))
	a.drop(&call.ConnError{Addr: a.addr, Cause: err}, true)
}

// connectTimedOut is the error of a connect (dial, TLS handshake, authentication) that timed out.
// The dial's "i/o timeout" matches context.DeadlineExceeded (one time in two or three, as the
// dialer happens to see it), which tells a caller that the call's deadline passed and the request
// may have run: a connect that timed out sent nothing. So it matches what err matches (ErrTLS,
// ErrAuth, ...) but the deadline errors: the call fails with ErrConnection, not as timed out.
type connectTimedOut struct {
	err   error
	after time.Duration
}

func (e *connectTimedOut) Error() string {
	return fmt.Sprintf("%v (connect timeout %v)", e.err, e.after)
}

// Is reports whether err matches target, the deadline errors excepted.
func (e *connectTimedOut) Is(target error) bool {
	return target != context.DeadlineExceeded && target != os.ErrDeadlineExceeded && errors.Is(e.err, target)
}

// As finds target in err's chain.
func (e *connectTimedOut) As(target any) bool { return errors.As(e.err, target) }

// OnClose is called on the loop when the connection closed, by either side: every call waiting
// on it fails now with a connection error (calls not yet written may be retried elsewhere). The
// next Send reconnects. Must be called on the loop goroutine.
func (a *AdapterProxy) OnClose(c gnet.Conn, err error) {
	if c != a.conn {
		return // a connection this proxy already detached (idle, keepalive, protocol error)
	}
	if a.udp {
		if err = udpCloseCause(err); err == errEmptyDatagram {
			a.stats.BadDatagrams++
		}
	}
	a.closed(err)
}

// closed forgets the connection after it closed or failed. A connection that closed with
// two-way calls waiting and had never answered one is, to the client, a failed connect (a proxy
// or load balancer that accepts and resets): it backs off as after a refused dial. So is the
// second connection in a row that carried only one-way calls and was closed by the peer, without
// a byte from it, within the connect timeout (at least a second) of opening: one-way calls end
// when handed on, so none waits here, and such a peer would otherwise take a connect per one-way
// call and stay in rotation; the first may be a server's idle close. A connection that took
// bytes and stayed open longer than that window is not refused, whatever it answered. Any other
// connection carried traffic: the next call reconnects at once, without a health penalty beyond
// the calls it failed.
func (a *AdapterProxy) closed(err error) {
	if a.state != stateConnected {
		return
	}
	if err == nil {
		err = errClosedLocally
	}
	now := a.loop.Now()
	a.state = stateIdle
	a.conn = nil
	a.attachFD(nil)
	a.stopBig()
	a.in.Reset()
	a.stats.ConnLosses++
	own := a.ownCalls() // the calls of a connection moved off (drain.go) are not this one's
	young := now-a.openedAt < int64(max(a.opts.ConnectTimeout, time.Second))
	if own == 0 && !a.heard && a.handed > 0 && !isLocalClose(err) && young {
		a.unheard++
	} else {
		a.unheard = 0
	}
	rejected := own > 0 || a.unheard >= 2
	// A connection that took bytes and stayed open past that window was accepted: its close is
	// a lost connection even if no reply proved it (one-way calls before its first two-way one).
	proven := a.proven || a.handed > 0 && !young
	if !a.heard && !proven && rejected && a.ep.Proto == endpoint.TCP && !isLocalClose(err) {
		err = &silentPeerError{err: err}
	}
	switch {
	case !proven && rejected:
		a.dialFails++
		a.lastErr = err
		a.retryAt = now + int64(backoff(a.dialFails))
		a.health.connectFailed(now)
	case own > 0:
		a.dialFails, a.retryAt = 0, 0
		a.health.fail(now)
		// While half-open, the loss decides the breaker only if its probe was on it.
		id := int32(0)
		if g := &a.guard; g.probing && a.calls.has(g.probeID) {
			id = g.probeID
		}
		a.guard.failed(&a.opts.Breaker, now, errorCost, id)
	default:
		a.dialFails, a.retryAt = 0, 0
	}
	if own > 0 && !isLocalClose(err) {
		// Calls fail with it: an operator hears of it at the default level (once a second).
		a.warn("connection lost", zap.Error(err), zap.Int("calls", own))
	} else {
		a.log.Debug("connection closed", zap.Error(err))
	}
	if a.opts.Push != nil {
		a.opts.Push.Closed(a, err)
	}
	a.drop(&call.ConnError{Addr: a.addr, Cause: err}, true)
}

// detach gives up the connection from this side (idle, unanswered keepalive): the proxy forgets
// it before asking gnet to close it, so that calls routed in the same loop turn go to a new
// connection instead of being written to one about to close. Calls written to it fail with a
// connection error; calls not written are retried. No health penalty: the next call reconnects.
func (a *AdapterProxy) detach(cause error) {
	c := a.forget(cause)
	if c == nil {
		return
	}
	a.drop(&call.ConnError{Addr: a.addr, Cause: cause}, true)
	c.SetContext(nil) // its last bytes and its close are not this proxy's any more
	_ = c.Close()
}

// replace gives up the connection of an inactive endpoint whose health probe went unanswered
// over it (it takes no bytes and answers nothing: a flow a NAT or load balancer lost, a peer
// stuck on it) and dials a new one at once, which the next probe uses: probing a dead
// connection forever would keep the endpoint out of rotation for good (TarsCpp, too, closes the
// transceiver of an endpoint it takes out). Calls not written yet wait for the new connection.
// The old connection goes to a drainer (drain.go), as after _reconnect_: a server that was only
// slow (a handler holding its loop past the probe's timeout) still answers the calls written on
// it, which complete as usual; the drainer closes it once the latest of their deadlines has
// passed, and the calls still waiting then end with ErrTimeout, as they would have on the old
// connection: a server that stalled is not reported as a connection error, and no call is
// retried that the server may have run. Not for udp, whose socket carries no state a new one
// would not (udp.go): there an unanswered probe only keeps the endpoint inactive.
func (a *AdapterProxy) replace(cause error) {
	c := a.conn
	if a.udp || a.state != stateConnected || c == nil {
		return
	}
	a.moveOff(c, cause)
	if a.state == stateIdle {
		a.dial(a.loop.Now()) // Opened sends the probe
	}
}

// forget detaches the current connection from the proxy (which is idle afterwards) and returns
// it, or nil when there is none; the caller closes it and decides what becomes of its calls.
func (a *AdapterProxy) forget(cause error) gnet.Conn {
	c := a.conn
	if a.state != stateConnected || c == nil {
		return nil
	}
	a.state = stateIdle
	a.conn = nil
	a.attachFD(nil)
	a.stopBig()
	a.in.Reset()
	if cause != errShort && cause != errReconnect {
		a.stats.ConnLosses++
	}
	a.dialFails, a.retryAt = 0, 0
	a.log.Debug("closing connection", zap.Error(cause))
	if a.opts.Push != nil {
		a.opts.Push.Closed(a, cause)
	}
	return c
}

// OnTraffic completes the calls answered by every complete reply frame on c. A large reply
// arriving over many reads is moved into its own buffer as it arrives (internal/inbound), so
// each OnTraffic costs what one read returned and the loop never stalls on it. A framing or
// decoding error closes the connection (failing its calls). Must be called on the loop
// goroutine.
func (a *AdapterProxy) OnTraffic(c gnet.Conn) gnet.Action {
	if a.udp {
		return a.onDatagram(c)
	}
	a.lastIO = a.loop.Now()
	a.lastRead, a.lastMoved = a.lastIO, a.lastIO
	if c.InboundBuffered() > 0 {
		a.heard = true
	}
	for {
		frame, owned, err := a.in.Next(c)
		if err == nil && frame != nil {
			err = a.reply(frame, owned)
		}
		if a.oversized(err) {
			continue
		}
		if err != nil {
			a.warn("bad reply, closing connection", zap.Error(err))
			_, _ = c.Discard(-1)
			a.closed(fmt.Errorf("protocol error: %w", err))
			c.SetContext(nil)
			return gnet.Close
		}
		if frame == nil {
			if a.reconnect {
				a.reconnect = false
				a.moveOff(c, errReconnect)
				return gnet.None
			}
			if a.opts.Short {
				a.closeIfDone()
			}
			return gnet.None
		}
	}
}

// reply completes the call that frame answers. An owned frame (a bufpool buffer) becomes the
// call's, its body handed on without a copy; another frame is a view whose body is copied.
func (a *AdapterProxy) reply(frame []byte, owned bool) error {
	a.stats.BytesIn += uint64(len(frame))
	r := &a.resp
	*r = codec.ResponsePacket{}
	if err := codec.DecodeResponse(frame, r); err != nil {
		if owned {
			bufpool.Put(frame)
		}
		return err
	}
	if r.RequestID == codec.PushRequestID {
		a.pushed(r)
		if owned {
			bufpool.Put(frame)
		}
		*r = codec.ResponsePacket{}
		return nil
	}
	stopping := r.Ret == codec.RetOverload && r.ResultDesc == codec.StoppingDesc
	c := a.calls.take(r.RequestID)
	if c == nil && stopping && r.PacketType == codec.PacketOneway {
		// A stopping tarscomm server refused a one-way call (server.appendOnewayRefusal): it
		// is lost, but the next calls go elsewhere. Request id -1 is its notice of the Stop,
		// sent on every connection as it begins, for no call (ids given here are positive).
		a.stopRefused(a.loop.Now(), r.RequestID > 0)
		if owned {
			bufpool.Put(frame)
		}
		*r = codec.ResponsePacket{}
		return nil
	}
	if c == nil {
		a.stats.Late++
		if owned {
			bufpool.Put(frame)
		}
		*r = codec.ResponsePacket{} // its body is a view of frame: keep none of it
		return nil
	}
	now := a.answered(c, r.Ret, stopping)
	switch {
	case c.Deadline != 0 && now > c.Deadline:
		// The reply came after the deadline (the sweep that would have expired the call had
		// not run yet: a starved ticker, a long batch): a call never succeeds after its
		// deadline. The peer did answer, so it counts for health as a reply, and as late.
		a.stats.Late++
		if owned {
			bufpool.Put(frame)
		}
		*r = codec.ResponsePacket{}
		c.Complete(call.ErrTimeout)
		return nil
	case c.Abandoned():
		if owned {
			bufpool.Put(frame)
		}
	case stopping && c.Refused == 0 && c.Dest != nil:
		// A tarscomm server that is stopping refused the call without running it: it goes to
		// another endpoint (ObjectProxy.Retry), once.
		if owned {
			bufpool.Put(frame)
		}
		err := &call.ServerError{Code: r.Ret, Desc: r.ResultDesc, Endpoint: a.addr}
		*r = codec.ResponsePacket{}
		c.Refused = 1
		c.Dest.Retry(c, err)
		return nil
	case owned:
		c.Ret, c.Desc, c.RspCtx, c.RspSt = r.Ret, r.ResultDesc, r.Context, r.Status
		c.SetBigBody(frame, r.Buffer)
	default:
		c.Ret, c.Desc, c.RspCtx, c.RspSt = r.Ret, r.ResultDesc, r.Context, r.Status
		c.SetBody(r.Buffer)
	}
	*r = codec.ResponsePacket{}
	c.Complete(nil)
	return nil
}

// answered does the bookkeeping of call c, taken from the pending calls, whose reply (return
// code ret; from a stopping server if stopping) has come, and returns the loop's time.
func (a *AdapterProxy) answered(c *call.Call, ret int32, stopping bool) int64 {
	a.loop.Wheel().Remove(c)
	a.stats.Replies++
	now := a.loop.Now()
	if stopping {
		// Not the endpoint's failure: no latency sample and no overload backoff either (they
		// would keep a restarted server out of p2c's choice and the breaker's for seconds).
		a.stopRefused(now, !a.isPing(c))
	} else {
		a.health.ok(now, c.SentAt, a.isPing(c), a.openedAt)
		a.replied(c, ret)
	}
	if !a.proven {
		a.proven = true
		a.dialFails, a.retryAt = 0, 0
		a.health.connected()
	}
	if a.isPing(c) {
		a.ping = nil
	}
	return now
}

// responseHead is the Assembler's check of an oversized reply's first bytes (inbound.Assembler.Head).
func responseHead(head []byte, length int) (int, error) {
	var p codec.ResponsePacket
	return codec.DecodeResponseHead(head, length, &p)
}

// oversized fails the call answered by a reply longer than max-packet-size, when err (from
// Next) is an *inbound.Oversized whose head reads as a reply's: the Assembler skips the reply
// unread, and the connection and its other calls go on (before, the connection was closed under
// them, and the endpoint counted a failure). The call fails with ErrDecode, naming the sizes; the
// server ran it. It reports whether err was handled so.
func (a *AdapterProxy) oversized(err error) bool {
	ov, ok := err.(*inbound.Oversized) // as Next returns it; errors.As would allocate per call
	if !ok {
		return false
	}
	r := &a.resp
	*r = codec.ResponsePacket{}
	if _, err := codec.DecodeResponseHead(ov.Head, ov.Length, r); err != nil {
		return false
	}
	id := r.RequestID
	*r = codec.ResponsePacket{}
	a.stats.BytesIn += uint64(ov.Length)
	a.warn("reply exceeds max-packet-size, skipped", zap.Int("bytes", ov.Length), zap.Int("limit", ov.Max), zap.Int32("request_id", id))
	if id == codec.PushRequestID {
		a.stats.Pushes++
		a.stats.PushesDropped++
		return true
	}
	c := a.calls.take(id)
	if c == nil {
		a.stats.Late++
		return true
	}
	now := a.answered(c, codec.RetOK, false) // the server answered; the limit is ours
	if c.Deadline != 0 && now > c.Deadline {
		a.stats.Late++
		c.Complete(call.ErrTimeout)
		return true
	}
	c.Complete(fmt.Errorf("%w: the reply of %d bytes from %s exceeds max-packet-size %d (%w)",
		call.ErrDecode, ov.Length, a.addr, ov.Max, codec.ErrFrameTooLarge))
	return true
}

// stopRefused records a refusal by a stopping server (codec.StoppingDesc): the endpoint leaves
// rotation at once, as the health rules take a failing one out. Its probes keep it out while the
// server finishes its Stop (they are refused too; its listener is closed already, and its
// connections close at the end), so that no call dials a server gone (it would fail with a
// refused connect, unrun but not retried under retries = 0), and bring it back once a server
// answers there again (a restarted one). The refusal is not a failure of the endpoint. A call's
// refusal is counted (Stats.StopRefused); a ping's, or the server's notice, is not.
func (a *AdapterProxy) stopRefused(now int64, call bool) {
	if call {
		a.stats.StopRefused++
	}
	a.health.deactivate(now)
}

// backoff returns the wait before the next dial after n consecutive failures.
func backoff(n int) time.Duration {
	d := backoffMin
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}
