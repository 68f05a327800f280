package tlsconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// bufSize is the buffer of each direction of a bridge: what one read moves at most.
const bufSize = 256 << 10

// pairBuffer is the socket buffer asked for each end of a bridge's socket pair.
const pairBuffer = 1 << 20

// closeNotifyLimit bounds the close_notify alert an orderly close sends to the peer.
const closeNotifyLimit = 100 * time.Millisecond

// Group owns the bridges of one owner (a net thread, a server) so that the owner can close them
// all and wait for their goroutines. The zero value is ready to use; its methods are safe for
// concurrent use.
type Group struct {
	mu     sync.Mutex
	links  map[*Link]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ErrGroupClosed is returned by Bridge after Close.
var ErrGroupClosed = errors.New("tlsconn: closed")

// Link is one bridged TLS connection: the goroutines between a tls.Conn and the socket the loop
// reads and writes. Its methods are safe for concurrent use.
type Link struct {
	g    *Group
	addr string
	tc   *tls.Conn
	rel  net.Conn // our end of the socket pair
	err  atomic.Pointer[Error]
	once sync.Once
	left atomic.Int32 // goroutines still running
}

// Bridge starts relaying tc, whose handshake is complete, through a new socket pair, and
// returns the pair's other end for the caller to enroll with its gnet loop (gnet duplicates it;
// the caller closes what it is given once enrolled, or on failure) and the Link, to Close when
// the loop's connection closes. addr names the peer in errors.
func (g *Group) Bridge(tc *tls.Conn, addr string) (net.Conn, *Link, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsconn: socketpair: %w", err)
	}
	for _, fd := range fds {
		// Room for a few large messages, so that the loop's writes of a batch complete in one
		// call rather than piling up in gnet's buffer (the system may cap it lower).
		_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, pairBuffer)
		_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, pairBuffer)
	}
	loopSide, err := fileConn(fds[0], "tls-loop")
	if err != nil {
		_ = syscall.Close(fds[1])
		return nil, nil, err
	}
	rel, err := fileConn(fds[1], "tls-relay")
	if err != nil {
		_ = loopSide.Close()
		return nil, nil, err
	}
	l, err := g.BridgeConn(tc, rel, addr)
	if err != nil {
		_ = loopSide.Close()
		return nil, nil, err
	}
	return loopSide, l, nil
}

// BridgeConn is Bridge over a connection of the caller's: rel is the end of a local stream
// connection (a Unix socket) whose other end the loop owns. The Link owns rel from now on,
// even on error (then rel is closed, tc is not).
func (g *Group) BridgeConn(tc *tls.Conn, rel net.Conn, addr string) (*Link, error) {
	l := &Link{g: g, addr: addr, tc: tc, rel: rel}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		_ = rel.Close()
		return nil, ErrGroupClosed
	}
	if g.links == nil {
		g.links = make(map[*Link]struct{})
	}
	g.links[l] = struct{}{}
	l.left.Store(2)
	g.wg.Add(2)
	g.mu.Unlock()
	go l.encrypt()
	go l.decrypt()
	return l, nil
}

// fileConn makes a net.Conn of fd, closing fd (net.FileConn keeps a duplicate).
func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	c, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("tlsconn: %s: %w", name, err)
	}
	return c, nil
}

// Close closes every Link and waits until all their goroutines have exited. Bridge fails
// afterwards.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	links := make([]*Link, 0, len(g.links))
	for l := range g.links {
		links = append(links, l)
	}
	g.mu.Unlock()
	for _, l := range links {
		_ = l.Close()
	}
	g.wg.Wait()
}

// Len returns the number of Links whose goroutines are running.
func (g *Group) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.links)
}

// Err returns the TLS failure that ended the link, or nil if it is running or ended otherwise
// (closed by either side, connection lost). Record it in place of the loop's own close error:
// the loop sees only the socket pair closing.
func (l *Link) Err() error {
	if e := l.err.Load(); e != nil {
		return e
	}
	return nil
}

// ConnectionState returns the state of the TLS connection (version, peer certificates, ...).
func (l *Link) ConnectionState() tls.ConnectionState { return l.tc.ConnectionState() }

// Close ends the link at once: it closes the network connection (no close_notify: the peer may
// not be reading) and the socket pair. The goroutines exit soon after. Closing again does
// nothing.
func (l *Link) Close() error {
	l.once.Do(func() {
		_ = l.tc.NetConn().Close()
		_ = l.rel.Close()
	})
	return nil
}

// done records that one goroutine of the link exited.
func (l *Link) done() {
	if l.left.Add(-1) == 0 {
		l.g.mu.Lock()
		delete(l.g.links, l)
		l.g.mu.Unlock()
	}
	l.g.wg.Done()
}

// fail records err, from op on the tls.Conn, as the link's cause if it is a TLS failure and
// nothing was recorded before.
func (l *Link) fail(op string, err error) {
	if !isTLSFailure(err) {
		return
	}
	e := &Error{Addr: l.addr, Op: op, Err: err}
	if isRemoteAlert(err) {
		e.Hint = "the peer ended the connection with a TLS alert; after a TLS 1.3 handshake that is how a refused client certificate shows"
	}
	l.err.CompareAndSwap(nil, e)
}

// encrypt moves what the loop writes into the TLS connection. It is the only writer of tc. When
// the loop closes its end, it sends close_notify (briefly: the peer may not read) and closes
// the link.
func (l *Link) encrypt() {
	defer l.done()
	buf := make([]byte, bufSize)
	for {
		n, err := l.rel.Read(buf)
		if n > 0 {
			bc, _ := l.tc.NetConn().(*bufConn)
			if bc != nil {
				bc.gather()
			}
			_, werr := l.tc.Write(buf[:n])
			if bc != nil {
				if ferr := bc.flush(); werr == nil {
					werr = ferr
				}
			}
			if werr != nil {
				l.fail("write", werr)
				_ = l.Close()
				return
			}
		}
		if err != nil {
			// The loop closed its end (or Close did): end the TLS session politely.
			_ = l.tc.SetWriteDeadline(time.Now().Add(closeNotifyLimit))
			_ = l.tc.CloseWrite()
			_ = l.Close()
			return
		}
	}
}

// decrypt moves what the peer sends to the loop. It is the only reader of tc. When the peer
// closes, or TLS fails, it records the cause and closes the link: the loop sees end of file.
//
// tls.Conn.Read returns one record (at most 16 KiB) per call. To hand the loop all that has
// arrived in one write (one wakeup, one read there), decrypt goes on reading records the
// tls.Conn already holds, or the socket already has, with a read deadline in the past: the
// network connection then fails at once instead of waiting, which tls.Conn treats as a
// temporary error and keeps its partial input.
func (l *Link) decrypt() {
	defer l.done()
	buf := make([]byte, bufSize)
	raw := l.tc.NetConn()
	for {
		n, err := l.tc.Read(buf)
		if err == nil && n > 0 && n < len(buf)-maxRecord {
			_ = raw.SetReadDeadline(past)
			for err == nil && n < len(buf)-maxRecord {
				var m int
				m, err = l.tc.Read(buf[n:])
				n += m
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = raw.SetReadDeadline(time.Time{})
			}
		}
		if n > 0 {
			if _, werr := l.rel.Write(buf[:n]); werr != nil {
				_ = l.Close()
				return
			}
		}
		if err != nil {
			l.fail("read", err)
			_ = l.Close()
			return
		}
	}
}

// maxRecord is the largest plaintext of one TLS record.
const maxRecord = 16 << 10

// past is a deadline that has passed.
var past = time.Unix(1, 0)
