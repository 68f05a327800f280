package adapterproxy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/datagram"
	"github.com/tarscomm/tarscomm/internal/inbound"
)

// TARS over UDP (a udp endpoint): the net thread dials a connected UDP socket and enrolls it
// with gnet like a TCP connection, so the AdapterProxy's machinery is the same: the pending
// table, deadlines in the wheel, health, backoff, stats. What differs is here:
//
//   - Writing: each call is one datagram, written from its own frame; nothing is batched, and no
//     writer goroutine finishes large frames (a frame over datagram.MaxSize is refused by send,
//     with ErrDatagramTooLarge, and never reaches the queue). A send the socket has no room for
//     (EAGAIN, ENOBUFS) fails that call alone with ErrQueueFull; the socket stays.
//   - Reading: gnet hands OnTraffic one datagram, which must be exactly one reply frame. Anything
//     else (truncated, trailing bytes, undecodable) is dropped and counted (Stats.BadDatagrams):
//     one bad datagram says nothing of the next, so the socket stays, unlike a TCP stream.
//   - No short connections: a servant's short-connections keeps its udp sockets (closeIfDone
//     skips them): a socket holds nothing on the server, and the next call would only open
//     another.
//   - No keepalive pings: a lost datagram is ordinary on UDP, and an unanswered ping closes the
//     connection and fails every call in flight, which would turn one lost ping into many failed
//     calls; each call's own deadline already tells a dead server from a live one (TarsCpp does
//     not ping UDP endpoints either). Health probes of an inactive endpoint are still sent:
//     unanswered, they only keep it inactive.
//   - Failures: a server that never answers shows as timeouts, which the health rules count as
//     for TCP. A closed port answers with an ICMP port unreachable, which the kernel reports on
//     the connected socket as an error: gnet then closes the socket (with io.EOF, which
//     udpCloseCause renames), and the AdapterProxy handles it as a lost connection: its calls
//     fail (or are retried) at once, and reconnects back off as after a refused TCP connect. A
//     failed send is a connection failure too. (TarsCpp's client sends on an unconnected socket,
//     which never sees ICMP errors: there a closed port shows as timeouts only.)

// ErrDatagramTooLarge matches a call refused because its request frame is larger than one UDP
// datagram carries (65507 bytes): it was not sent.
var ErrDatagramTooLarge = datagram.ErrTooLarge

// refuseDatagram ends c, whose frame is too large for a datagram, without sending it.
func (a *AdapterProxy) refuseDatagram(c *call.Call) bool {
	a.loop.Wheel().Remove(c)
	c.Complete(fmt.Errorf("udp endpoint %s: %w", a.addr, datagram.TooLarge("request", len(c.Frame))))
	return false
}

// flushDatagrams is Flush for a UDP socket: one datagram per queued call, in order, within the
// flush budget.
func (a *AdapterProxy) flushDatagrams() {
	var start int64
	w, now := a.loop.Wheel(), a.loop.Now() // the turn's clock
	for n := 0; a.state == stateConnected && a.q.live > 0; n++ {
		if n&63 == 63 && a.overBudget(&start) {
			return
		}
		c := a.q.front()
		if c == nil {
			return
		}
		if c.Abandoned() {
			a.abandon(c)
			continue
		}
		if a.expiredUnsent(c, now) {
			continue
		}
		c.Delayed(now) // it waited for the socket: the server is told the time left
		conn := a.conn
		a.lastIO = now
		a.stats.Writes++
		a.stats.BytesOut += uint64(len(c.Frame))
		if _, err := conn.Write(c.Frame); err != nil {
			if sendBufferFull(err) {
				a.datagramRefused(c, err)
				continue
			}
			a.datagramFailed(conn, err)
			return
		}
		a.q.pop()
		if c.Oneway {
			w.Remove(c)
			c.Complete(nil)
		}
	}
}

// sendBufferFull reports whether a datagram's send failed for want of room (the socket's send
// buffer, the kernel's buffers) or was interrupted: the socket itself is fine.
func sendBufferFull(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EINTR)
}

// datagramRefused ends c, whose datagram the socket had no room for: it was not sent, and fails
// at once with ErrQueueFull; the socket, the other calls and the endpoint's health are left alone.
func (a *AdapterProxy) datagramRefused(c *call.Call, err error) {
	a.unqueue(c, fmt.Errorf("%w: udp send to %s: %v", call.ErrQueueFull, a.addr, err))
}

// datagramFailed handles a send that failed on UDP socket conn: as a lost connection (its calls
// fail or are retried, with the health penalty closed gives), and the socket is closed; the next
// call dials a new one.
func (a *AdapterProxy) datagramFailed(conn gnet.Conn, err error) {
	a.warn("udp send failed, closing socket", zap.Error(err))
	a.closed(err)
	conn.SetContext(nil)
	_ = conn.Close()
}

// onDatagram completes the call that c's datagram answers. A datagram that is not one decodable
// reply is dropped and counted; the socket stays. A reply above max-packet-size fails its call
// with ErrDecode naming the sizes, as over tcp (before, it was dropped as a bad datagram and its
// call waited for its deadline).
func (a *AdapterProxy) onDatagram(c gnet.Conn) gnet.Action {
	a.lastIO = a.loop.Now()
	a.lastRead, a.lastMoved = a.lastIO, a.lastIO
	a.heard = true
	d, _ := c.Next(-1)
	err := datagram.Check(d)
	if err == nil && len(d) > a.opts.MaxPacketSize { // as over tcp: the largest reply accepted
		ov := &inbound.Oversized{Length: len(d), Max: a.opts.MaxPacketSize, Head: d[:min(len(d), inbound.HeadLen)]}
		if a.oversized(ov) {
			return gnet.None
		}
		err = fmt.Errorf("reply of %d bytes above max-packet-size %d", len(d), a.opts.MaxPacketSize)
	}
	if err == nil {
		err = a.reply(d, false)
	}
	if err != nil {
		a.stats.BadDatagrams++
		a.warn("bad reply datagram, dropped", zap.Error(err), zap.Int("bytes", len(d)))
	}
	return gnet.None
}

// errUnreachable is why a udp socket closed on an error event: the kernel got an ICMP error for
// a datagram sent on it, on loopback and most networks a port unreachable.
var errUnreachable = errors.New("udp: the socket reported an error: nothing serves the port (ICMP port unreachable) or the host is unreachable")

// errEmptyDatagram is the close cause of a udp socket that received an empty datagram: gnet
// reads a client's datagram socket as a stream, and takes a read of 0 bytes for the end of it.
var errEmptyDatagram = errors.New("udp: the peer sent an empty datagram, which ends the socket (the event loop reads it as a stream's end): the calls waiting on it fail")

// udpCloseCause names the cause of a udp socket's close: gnet reports an error event on the
// socket as io.EOF, which means nothing on a datagram socket, and an empty datagram as a read
// that returned io.EOF.
func udpCloseCause(err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) && se.Syscall == "read" && errors.Is(se.Err, io.EOF) {
		return errEmptyDatagram
	}
	if errors.Is(err, io.EOF) {
		return errUnreachable
	}
	return err
}
