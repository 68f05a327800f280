package adapterproxy

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Reconnect backoff after failed dials: doubling from backoffMin up to backoffMax, with up to
// 25% jitter so that many clients do not reconnect in step.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = 5 * time.Second
)

// OnOpen is called on the loop when the dialled connection is registered: it writes what
// waited for it. Must be called on the loop goroutine.
func (a *AdapterProxy) OnOpen(c gnet.Conn) {
	a.conn = c
	a.state = stateConnected
	a.lastIO = a.loop.Now()
	a.proven = false // the backoff is reset by the first reply, not by the connect
	a.log.Debug("connected")
	a.Flush()
}

// DialFailed is called on the loop when a dial did not produce a connection: every waiting
// call is retried on another endpoint (if the servant allows retries) or fails now, and the
// next dial waits for the backoff. Must be called on the loop goroutine.
func (a *AdapterProxy) DialFailed(err error) {
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

// OnClose is called on the loop when the connection closed, by either side: every call waiting
// on it fails now with a connection error (calls not yet written may be retried elsewhere). The
// next Send reconnects. Must be called on the loop goroutine.
func (a *AdapterProxy) OnClose(c gnet.Conn, err error) {
	if c != a.conn {
		return // a connection this proxy already gave up (after a protocol error)
	}
	a.closed(err)
}

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
	a.stats.ConnLosses++
	if !a.proven {
		// Closed before any reply: to the client this is a failed connect (a proxy or load
		// balancer that accepts and resets), so it backs off as after a refused dial.
		a.dialFails++
		a.lastErr = err
		a.retryAt = now + int64(backoff(a.dialFails))
		a.health.connectFailed(now)
	} else if len(a.pending) > 0 {
		a.health.fail(now)
	}
	a.log.Debug("connection closed", zap.Error(err))
	a.drop(&call.ConnError{Addr: a.addr, Cause: err}, true)
}

// OnTraffic parses every complete reply frame in c's inbound buffer and completes the calls
// they answer. A framing or decoding error closes the connection (failing its calls). Must be
// called on the loop goroutine.
func (a *AdapterProxy) OnTraffic(c gnet.Conn) gnet.Action {
	buf, _ := c.Peek(-1)
	a.lastIO = a.loop.Now()
	off := 0
	for {
		frame, n, err := codec.NextFrame(buf[off:], a.opts.MaxPacketSize)
		if err == nil && frame != nil {
			err = a.reply(frame)
		}
		if err != nil {
			a.warn("bad reply, closing connection", zap.Error(err))
			_, _ = c.Discard(-1)
			a.closed(fmt.Errorf("protocol error: %w", err))
			return gnet.Close
		}
		if frame == nil {
			break
		}
		off += n
	}
	if off > 0 {
		_, _ = c.Discard(off)
	}
	return gnet.None
}

// reply completes the call that frame answers.
func (a *AdapterProxy) reply(frame []byte) error {
	r := &a.resp
	*r = codec.ResponsePacket{}
	if err := codec.DecodeResponse(frame, r); err != nil {
		return err
	}
	c, ok := a.pending[r.RequestID]
	if !ok {
		a.stats.Late++
		return nil
	}
	delete(a.pending, r.RequestID)
	a.loop.Wheel().Remove(c)
	a.stats.Replies++
	a.health.ok(a.loop.Now())
	if !a.proven {
		a.proven = true
		a.dialFails, a.retryAt = 0, 0
		a.health.connected()
	}
	if c == a.ping {
		a.ping = nil
	}
	if !c.Abandoned() {
		c.Ret = r.Ret
		c.Desc = r.ResultDesc
		c.Body = append(c.Body[:0], r.Buffer...)
		c.RspCtx = r.Context
		c.RspSt = r.Status
	}
	c.Complete(nil)
	return nil
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
