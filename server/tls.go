package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/tlsconn"
)

// tlsFront is the TLS side of a WithTLS server. Clients connect to its listener; each
// connection is handshaken on a goroutine of its own and relayed by package tlsconn over a Unix
// connection to the engine, whose own listener is a socket in a private directory. The relay
// binds its end to a unique abstract name, which the engine sees as the peer's address: OnOpen
// finds the client's TCP address and the bridge by it. Handlers see the connection as any other.
//
// (Engine.Register would skip the socket path, but gnet fills the balancer it reads without
// synchronization after OnBoot, and runs each registration on a pool goroutine that outlives
// it; a dial to the engine's listener needs neither.)
type tlsFront struct {
	s    *Server
	ln   net.Listener
	dir  string // holds the engine's socket
	sock string // the engine's socket

	ctx     context.Context // cancelled by stop: ends handshakes
	cancel  context.CancelFunc
	wg      sync.WaitGroup // the accept loop and the connections being set up
	links   tlsconn.Group
	pending sync.Map // abstract name -> *tlsPeer: relayed connections until OnOpen takes them
}

// tlsSeq numbers the relay names of the process's TLS connections.
var tlsSeq atomic.Uint64

// tlsPeer is one relayed TLS connection as its server conn knows it.
type tlsPeer struct {
	remote net.Addr // the client's TCP address

	mu     sync.Mutex
	link   *tlsconn.Link // nil until the bridge runs
	closed bool          // the engine's connection closed
}

// setLink attaches the bridge; if the connection closed meanwhile, the bridge is closed.
func (p *tlsPeer) setLink(l *tlsconn.Link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.link = l
	if p.closed {
		_ = l.Close()
	}
}

// close closes the bridge with the engine's connection and returns the TLS failure that ended
// it, or err.
func (p *tlsPeer) close(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.link == nil {
		return err
	}
	_ = p.link.Close()
	if lerr := p.link.Err(); lerr != nil {
		return lerr
	}
	return err
}

// listenTLS opens the public listener on addr and the private directory of the engine's socket,
// and returns the front and the engine's address.
func (s *Server) listenTLS(addr string) (*tlsFront, string, error) {
	network := "tcp"
	if i := indexScheme(addr); i >= 0 {
		network, addr = addr[:i], addr[i+3:]
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "tarscomm-tls-")
	if err != nil {
		_ = ln.Close()
		return nil, "", err
	}
	f := &tlsFront{s: s, ln: ln, dir: dir, sock: filepath.Join(dir, "engine.sock")}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f, "unix://" + f.sock, nil
}

// indexScheme returns the index of "://" in addr, or -1.
func indexScheme(addr string) int {
	for i := 0; i+3 <= len(addr); i++ {
		if addr[i:i+3] == "://" {
			return i
		}
	}
	return -1
}

// start accepts clients in the background.
func (f *tlsFront) start() {
	f.wg.Add(1)
	go f.accept()
}

func (f *tlsFront) accept() {
	defer f.wg.Done()
	var backoff time.Duration
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || f.ctx.Err() != nil {
				return
			}
			// Out of file descriptors and the like: wait a little, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			f.s.log.Warn("tls accept", zap.Error(err), zap.Duration("retry in", backoff))
			select {
			case <-time.After(backoff):
			case <-f.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		f.wg.Add(1)
		go f.serve(nc)
	}
}

// serve handshakes with one client and relays its connection to the engine.
func (f *tlsFront) serve(nc net.Conn) {
	defer f.wg.Done()
	s := f.s
	remote := cloneAddr(nc.RemoteAddr())
	tc, err := tlsconn.Server(f.ctx, nc, s.opts.tls, s.opts.handshake)
	if err != nil {
		s.log.Debug("tls handshake failed", zap.Error(err))
		return
	}
	name := fmt.Sprintf("@tarscomm-tls-%d-%d", os.Getpid(), tlsSeq.Add(1))
	p := &tlsPeer{remote: remote}
	f.pending.Store(name, p)
	rel, err := net.DialUnix("unix", &net.UnixAddr{Name: name, Net: "unix"}, &net.UnixAddr{Name: f.sock, Net: "unix"})
	if err != nil {
		f.pending.Delete(name)
		_ = nc.Close()
		if f.ctx.Err() == nil {
			s.log.Warn("tls: cannot reach the engine", zap.Error(err))
		}
		return
	}
	link, err := f.links.BridgeConn(tc, rel, remote.String())
	if err != nil {
		f.pending.Delete(name)
		_ = nc.Close()
		return
	}
	p.setLink(link)
}

// take returns the relayed connection whose relay end is named by addr, or nil (a connection to
// the engine's socket that no relay made).
func (f *tlsFront) take(addr net.Addr) *tlsPeer {
	if addr == nil {
		return nil
	}
	v, ok := f.pending.LoadAndDelete(addr.String())
	if !ok {
		return nil
	}
	return v.(*tlsPeer)
}

// stop closes the listener, ends the handshakes in progress and waits for every connection
// being set up. Stop runs it before the engine stops.
func (f *tlsFront) stop() {
	_ = f.ln.Close()
	f.cancel()
	f.wg.Wait()
}

// close releases the rest once the engine has stopped: any bridge still running, the
// engine's socket directory.
func (f *tlsFront) close() {
	f.stop()
	f.links.Close()
	f.pending.Clear()
	_ = os.RemoveAll(f.dir)
}
