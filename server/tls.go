package server

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/tlsconn"
)

// tlsFront is the TLS side of a WithTLS server. Clients connect to its listener; each
// connection is handshaken on a goroutine of its own, bridged by package tlsconn, and
// registered with the engine, whose own listener is a Unix socket in a private directory that
// nobody else connects to. The handlers see the connection as any other; its Current names the
// client's TCP address.
type tlsFront struct {
	s      *Server
	ln     net.Listener
	dir    string        // holds the engine's socket
	primed chan struct{} // closed when the engine opened its first connection (prime)
	once   sync.Once

	ctx    context.Context // cancelled by stop: ends handshakes
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and the connections being set up
	links  tlsconn.Group

	mu   sync.RWMutex // held for reading while a connection is registered with the engine
	down bool         // guarded by mu: register no more (the engine is stopping)
}

// tlsPeer is the context of a TLS connection registered with the engine, until OnOpen.
type tlsPeer struct {
	remote net.Addr
	link   *tlsconn.Link
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
	f := &tlsFront{s: s, ln: ln, dir: dir, primed: make(chan struct{})}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f, "unix://" + filepath.Join(dir, "engine.sock"), nil
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

// start accepts clients in the background, once the engine is ready for Engine.Register: gnet
// fills its balancer on the Run goroutine after OnBoot, with no synchronization that Register
// could rely on. start connects once to the engine's own socket and waits for OnOpen (which
// runs on a loop, started after the balancer was filled) to call primedBy.
func (f *tlsFront) start() error {
	nc, err := net.DialTimeout("unix", filepath.Join(f.dir, "engine.sock"), 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close() //nolint:errcheck // only a signal
	select {
	case <-f.primed:
	case <-time.After(5 * time.Second):
		return errors.New("the engine did not open a connection within 5s")
	}
	f.wg.Add(1)
	go f.accept()
	return nil
}

// primedBy runs in OnOpen for a connection that came through the engine's own socket; it is
// closed at once.
func (f *tlsFront) primedBy() { f.once.Do(func() { close(f.primed) }) }

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

// serve handshakes with one client and hands its connection to the engine.
func (f *tlsFront) serve(nc net.Conn) {
	defer f.wg.Done()
	s := f.s
	remote := cloneAddr(nc.RemoteAddr())
	tc, err := tlsconn.Server(f.ctx, nc, s.opts.tls, s.opts.handshake)
	if err != nil {
		s.log.Debug("tls handshake failed", zap.Error(err))
		return
	}
	loopSide, link, err := f.links.Bridge(tc, remote.String())
	if err != nil {
		_ = nc.Close()
		return
	}
	ctx := gnet.NewNetConnContext(gnet.NewContext(context.Background(), tlsPeer{remote: remote, link: link}), loopSide)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.down {
		_ = loopSide.Close()
		_ = link.Close()
		return
	}
	ch, err := s.eng.Register(ctx)
	if err != nil {
		_ = loopSide.Close()
		_ = link.Close()
		return
	}
	// The engine runs until stop has taken mu: the registration completes (gnet closes
	// loopSide, keeping a duplicate).
	if r := <-ch; r.Err != nil {
		s.log.Debug("tls connection not registered", zap.Error(r.Err))
		_ = link.Close()
	}
}

// stop closes the listener, ends the handshakes in progress and waits for every connection
// being set up. Run it before the engine stops.
func (f *tlsFront) stop() {
	_ = f.ln.Close()
	f.cancel()
	f.mu.Lock()
	f.down = true
	f.mu.Unlock()
	f.wg.Wait()
}

// close releases the rest once the engine has stopped: any bridge still running, the
// engine's socket directory.
func (f *tlsFront) close() {
	f.stop()
	f.links.Close()
	_ = os.RemoveAll(f.dir)
}
