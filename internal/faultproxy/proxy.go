package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Direction selects one or both halves of a forwarded connection.
type Direction uint32

const (
	// Up is the client-to-server half: requests.
	Up Direction = 1 << iota
	// Down is the server-to-client half: replies.
	Down
	// Both is Up and Down.
	Both = Up | Down
)

func (d Direction) String() string {
	switch d {
	case 0:
		return "none"
	case Up:
		return "up"
	case Down:
		return "down"
	case Both:
		return "both"
	}
	return fmt.Sprintf("Direction(%d)", uint32(d))
}

// Refusal says what the Proxy does with new connections.
type Refusal uint32

const (
	// Accept forwards new connections (the default).
	Accept Refusal = iota
	// Reset accepts a new connection and resets it at once; the accept is counted. To a client
	// this is a server behind a load balancer that has no backend.
	Reset
	// Closed closes the listener, so connects are refused by the kernel (ECONNREFUSED): a server
	// that is down.
	Closed
)

// dialTimeout bounds the Proxy's dial to its upstream.
const dialTimeout = time.Second

// Stats counts what a Proxy did since New.
type Stats struct {
	Accepts       int64 // connections accepted from clients of this process, those reset at once included
	Foreign       int64 // connections from another process, reset at once and not counted elsewhere
	Refused       int64 // accepted connections reset at once by Refuse(Reset)
	UpstreamFails int64 // accepted connections reset because the upstream could not be dialled
	Forwarded     int64 // connections forwarded to the upstream
	Active        int64 // forwarded connections open now
	ClientCloses  int64 // forwarded connections the client ended (EOF or error while reading it)
	ServerCloses  int64 // forwarded connections the upstream ended
	Cuts          int64 // forwarded connections reset by Cut
	BytesUp       int64 // bytes forwarded from clients to the upstream
	BytesDown     int64 // bytes forwarded from the upstream to clients (replacements included)
	DroppedUp     int64 // bytes read from clients and black-holed
	DroppedDown   int64 // bytes read from the upstream and black-holed
}

type counters struct {
	accepts, foreign, refused, upstreamFails, forwarded, active atomic.Int64
	clientCloses, serverCloses, cuts                            atomic.Int64
	bytesUp, bytesDown, droppedUp, droppedDown                  atomic.Int64
}

// replacement is a pending CorruptNext.
type replacement struct {
	b          []byte
	closeAfter bool
}

// Proxy forwards TCP connections from its loopback address to an upstream address, with faults.
// Its methods are safe for concurrent use.
type Proxy struct {
	// Immutable after New.
	addr   string
	ctx    context.Context // cancelled by Close: ends upstream dials
	cancel context.CancelFunc

	// Fault switches, read by the connection goroutines.
	upstream  atomic.Pointer[string]
	delay     atomic.Int64  // nanoseconds each chunk is held
	blackhole atomic.Uint32 // Direction
	stall     atomic.Uint32 // Direction
	replace   atomic.Pointer[replacement]
	refusal   atomic.Uint32   // Refusal
	throttle  [2]atomic.Int64 // bytes per second forwarded Up ([0]) and Down ([1]); 0: unlimited

	mu      sync.Mutex
	ln      net.Listener       // guarded by mu; nil while refusing with Closed, or after Close
	pairs   map[*pair]struct{} // guarded by mu: forwarded connections open now
	changed chan struct{}      // guarded by mu: closed and replaced when a switch changes
	closed  bool               // guarded by mu

	wg    sync.WaitGroup // every goroutine the Proxy started
	stats counters
}

// New starts a Proxy listening on a free port of 127.0.0.1 and forwarding to upstream
// (host:port). Close stops it.
func New(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{
		addr:    ln.Addr().String(),
		ln:      ln,
		pairs:   make(map[*pair]struct{}),
		changed: make(chan struct{}),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.upstream.Store(&upstream)
	p.wg.Add(1)
	go p.serve(ln)
	return p, nil
}

// Addr returns the address clients connect to, "127.0.0.1:port". It stays the same for the
// Proxy's life, across Refuse(Closed) and Refuse(Accept).
func (p *Proxy) Addr() string { return p.addr }

// HostPort returns Addr's host and port.
func (p *Proxy) HostPort() (host, port string) {
	host, port, _ = net.SplitHostPort(p.addr)
	return host, port
}

// SetUpstream makes connections accepted from now on go to upstream; current ones keep theirs.
func (p *Proxy) SetUpstream(upstream string) { p.upstream.Store(&upstream) }

// SetDelay holds every chunk read from now on, in both directions, for d before forwarding it
// (0: no delay). Order is kept.
func (p *Proxy) SetDelay(d time.Duration) {
	p.delay.Store(int64(max(d, 0)))
}

// BlackHole makes the Proxy read and discard everything from the sides in dir (0: none), on
// current and new connections: the sender sees its writes succeed and never hears back.
func (p *Proxy) BlackHole(dir Direction) {
	p.blackhole.Store(uint32(dir & Both))
}

// Stall makes the Proxy stop reading from the sides in dir (0: none), on current and new
// connections: unread bytes fill the socket buffers until the sender's writes block. Nothing read
// from those sides is forwarded until the stall ends.
func (p *Proxy) Stall(dir Direction) {
	p.stall.Store(uint32(dir & Both))
	p.notify()
}

// CorruptNext replaces the next chunk the upstream sends (on whichever connection it comes) with
// b; if closeAfter, that connection is then closed (with a FIN, so the client reads b first). A
// later call replaces a replacement that has not been used yet. It is applied even while Down is
// black-holed.
func (p *Proxy) CorruptNext(b []byte, closeAfter bool) {
	p.replace.Store(&replacement{b: append([]byte(nil), b...), closeAfter: closeAfter})
}

// Refuse sets what happens to new connections; current ones are not touched (see Cut).
// Refuse(Closed) closes the listener; Refuse(Accept) or Refuse(Reset) listen again on the same
// port, and fail only if that port was taken meanwhile.
func (p *Proxy) Refuse(r Refusal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return net.ErrClosed
	}
	switch r {
	case Accept, Reset:
		p.refusal.Store(uint32(r))
		if p.ln != nil {
			return nil
		}
		ln, err := relisten(p.addr)
		if err != nil {
			return err
		}
		p.ln = ln
		p.wg.Add(1)
		go p.serve(ln)
		return nil
	case Closed:
		p.refusal.Store(uint32(r))
		if p.ln != nil {
			_ = p.ln.Close() // serve exits; connects queued in the backlog are reset
			p.ln = nil
		}
		return nil
	}
	return fmt.Errorf("faultproxy: unknown Refusal %d", r)
}

// relisten listens on addr again, retrying briefly in case the old socket is still going away.
func relisten(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, fmt.Errorf("faultproxy: listen again on %s: %w", addr, err)
}

// Cut resets every forwarded connection open now (both the client's and the upstream's side) and
// returns how many there were.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	cut := make([]*pair, 0, len(p.pairs))
	for c := range p.pairs {
		cut = append(cut, c)
	}
	p.mu.Unlock()
	n := 0
	for _, c := range cut {
		if c.close(true) {
			p.stats.cuts.Add(1)
			n++
		}
	}
	return n
}

// Pass makes the Proxy a plain forwarder again: no delay, black hole, stall, throttle or pending
// corruption, and new connections accepted.
func (p *Proxy) Pass() error {
	p.delay.Store(0)
	p.blackhole.Store(0)
	p.stall.Store(0)
	p.replace.Store(nil)
	p.throttle[0].Store(0)
	p.throttle[1].Store(0)
	p.notify()
	return p.Refuse(Accept)
}

// Stats returns the counters.
func (p *Proxy) Stats() Stats {
	s := &p.stats
	return Stats{
		Accepts:       s.accepts.Load(),
		Foreign:       s.foreign.Load(),
		Refused:       s.refused.Load(),
		UpstreamFails: s.upstreamFails.Load(),
		Forwarded:     s.forwarded.Load(),
		Active:        s.active.Load(),
		ClientCloses:  s.clientCloses.Load(),
		ServerCloses:  s.serverCloses.Load(),
		Cuts:          s.cuts.Load(),
		BytesUp:       s.bytesUp.Load(),
		BytesDown:     s.bytesDown.Load(),
		DroppedUp:     s.droppedUp.Load(),
		DroppedDown:   s.droppedDown.Load(),
	}
}

// Close stops listening, resets every connection, and waits for every goroutine of the Proxy.
// Calling it again does nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.cancel()
	open := make([]*pair, 0, len(p.pairs))
	for c := range p.pairs {
		open = append(open, c)
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	for _, c := range open {
		c.close(true)
	}
	p.wg.Wait()
	return nil
}

// notify wakes goroutines waiting for a switch to change (stalled readers).
func (p *Proxy) notify() {
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// changes returns a channel closed at the next switch change.
func (p *Proxy) changes() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// serve accepts connections on ln until ln is closed.
func (p *Proxy) serve(ln net.Listener) {
	defer p.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // e.g. out of file descriptors: try again
			continue
		}
		if !FromThisProcess(nc.RemoteAddr().String(), nc.LocalAddr().String()) {
			// A client of another test process dialled a port it knew, which this Proxy now
			// listens on: not this test's traffic.
			p.stats.foreign.Add(1)
			reset(nc)
			continue
		}
		p.stats.accepts.Add(1)
		if Refusal(p.refusal.Load()) == Reset {
			p.stats.refused.Add(1)
			reset(nc)
			continue
		}
		p.wg.Add(1)
		go p.open(nc)
	}
}

// open dials the upstream for the accepted client connection nc and starts forwarding.
func (p *Proxy) open(nc net.Conn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: dialTimeout}
	sc, err := d.DialContext(p.ctx, "tcp", *p.upstream.Load())
	if err != nil {
		p.stats.upstreamFails.Add(1)
		reset(nc)
		return
	}
	c := &pair{p: p, client: nc, server: sc, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		reset(nc)
		reset(sc)
		return
	}
	p.pairs[c] = struct{}{}
	p.stats.forwarded.Add(1)
	p.stats.active.Add(1)
	p.mu.Unlock()
	c.start()
}

// reset closes nc with a TCP RST rather than a FIN.
func reset(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = nc.Close()
}
