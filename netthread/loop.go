package netthread

import (
	"context"
	"net"
	"time"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/stats"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// loopSide is a Thread as the code on its loop sees it: the adapterproxy.Loop of its
// AdapterProxies and ObjectProxies, and the call.Recorder of calls that end before an endpoint
// takes them. Its methods are called on the loop goroutine (Dial and Go start goroutines of their
// own). It is not exported: the Thread's public face (Submit, Execute, Snapshot, Close) is for
// callers on any goroutine, and nothing off the loop can reach these.
type loopSide Thread

// onLoop returns t's loop side.
func (t *Thread) onLoop() *loopSide { return (*loopSide)(t) }

// Loop returns the thread as the code on its loop sees it, for building the ObjectProxies that
// live on this thread (objectproxy.New). Its methods may be called on the loop goroutine only.
func (t *Thread) Loop() adapterproxy.Loop { return t.onLoop() }

var (
	_ adapterproxy.Loop = (*loopSide)(nil)
	_ call.Recorder     = (*loopSide)(nil)
)

// Dirty asks for a.Flush after the current batch (adapterproxy.Loop).
func (l *loopSide) Dirty(a *adapterproxy.AdapterProxy) { l.dirty = append(l.dirty, a) }

// Resume makes a flush again on the next turn, which a wakeup makes sure of
// (adapterproxy.Loop).
func (l *loopSide) Resume(a *adapterproxy.AdapterProxy) {
	l.later = append(l.later, a)
	if l.notified.CompareAndSwap(false, true) {
		(*Thread)(l).wake()
	}
}

// Go runs fn on its own goroutine, which Close waits for after cancelling ctx
// (adapterproxy.Loop).
func (l *loopSide) Go(fn func(ctx context.Context)) {
	l.dials.Add(1)
	go func() {
		defer l.dials.Done()
		fn(l.ctx)
	}()
}

// Post runs fn on the loop soon (adapterproxy.Loop).
func (l *loopSide) Post(fn func()) { (*Thread)(l).post(fn) }

// Wheel is the loop's timing wheel (adapterproxy.Loop).
func (l *loopSide) Wheel() *call.Wheel { return l.wheel }

// Now is the loop's clock, read once per turn (adapterproxy.Loop).
func (l *loopSide) Now() int64 { return l.now }

// Batch is the buffer the loop's Flushes gather frames in, one at a time (adapterproxy.Loop).
func (l *loopSide) Batch() *[]byte { return &l.batch }

// Recorder is the loop's call counter, nil with NoStats (adapterproxy.Loop).
func (l *loopSide) Recorder() *stats.Recorder { return l.rec }

// RecordCall counts a call that ended before an endpoint took it (no endpoint, closed), with
// endpoint "" (call.Recorder).
func (l *loopSide) RecordCall(c *call.Call, err error) {
	if c.Func == "" {
		return
	}
	res, code := adapterproxy.Result(c, err)
	l.rec.Record(c.Servant, c.Func, "", res, code, time.Duration(l.now-c.Start))
}

// udpBuffer is the socket buffer size a udp connection asks for, each way.
const udpBuffer = 4 << 20

// Dial connects off the loop and enrolls the connection (adapterproxy.Loop). An ssl endpoint's
// connection is handshaken here too, within the same connect timeout, and its records are then
// encrypted and decrypted on the loop (tls.go).
func (l *loopSide) Dial(a *adapterproxy.AdapterProxy, gen uint32) {
	t := (*Thread)(l)
	t.dials.Add(1)
	go func() {
		defer t.dials.Done()
		var (
			nc  net.Conn
			ctx any = adapterproxy.Dialed{A: a, Gen: gen}
			err error
		)
		if a.Endpoint().Proto == endpoint.SSL {
			var sess *tlsconn.Session
			nc, sess, err = t.dialTLS(a)
			ctx = tlsDialed{Dialed: adapterproxy.Dialed{A: a, Gen: gen}, sess: sess}
		} else {
			start := time.Now()
			d := net.Dialer{Timeout: a.ConnectTimeout()}
			network := "tcp"
			if a.Endpoint().Proto == endpoint.UDP {
				network = "udp" // a connected socket: gnet reads it one datagram at a time
			}
			nc, err = d.DialContext(t.ctx, network, a.Addr())
			if uc, ok := nc.(*net.UDPConn); ok && err == nil {
				// Replies to a burst of calls arrive together, up to 64 KiB each; the kernel's
				// default receive buffer (about 200 KiB) holds three. Ask for room for a burst
				// (the kernel caps it at net.core.rmem_max): a datagram it drops is a call that
				// times out.
				_ = uc.SetReadBuffer(udpBuffer)
				_ = uc.SetWriteBuffer(udpBuffer)
			}
			if err == nil && a.Endpoint().AuthType == endpoint.AuthLocal && network == "tcp" { // no connection to authenticate on udp
				if err = t.authenticate(nc, a, start.Add(a.ConnectTimeout())); err != nil {
					_ = nc.Close()
				}
			}
		}
		if err == nil {
			t.dialMu.RLock()
			if t.dialClosed {
				err = call.ErrClosed
				_ = nc.Close()
			} else {
				_, err = t.client.EnrollContext(nc, ctx) // OnOpen runs on the loop
			}
			t.dialMu.RUnlock()
		}
		if err != nil {
			if t.ctx.Err() != nil {
				err = call.ErrClosed // Close cancelled the dial: not a failed connect
			}
			t.post(func() { a.DialFailed(gen, err) })
		}
	}()
}
