package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/cookie"
	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/datagram"
	"github.com/tarscomm/tarscomm/internal/gnetlog"
	"github.com/tarscomm/tarscomm/internal/inbound"
	"github.com/tarscomm/tarscomm/internal/lograte"
	"github.com/tarscomm/tarscomm/internal/sockq"
	"github.com/tarscomm/tarscomm/stats"
	"github.com/tarscomm/tarscomm/tracekey"
)

var (
	// ErrStarted is returned by Handle, HandleProto and Start once Start has been called:
	// register every handler first, then Start once.
	ErrStarted = errors.New("tarscomm/server: server already started")
	// ErrStopped is returned by Handle, HandleProto and Start after Stop (or after a failed
	// Start): a Server runs once; create a new one with New.
	ErrStopped = errors.New("tarscomm/server: server stopped")
	// ErrNilContext is returned by Stop given a nil context: nothing is stopped.
	ErrNilContext = errors.New("tarscomm/server: nil context")
)

// Server states, guarded by Server.mu.
const (
	stateNew = iota
	stateRunning
	stateStopped
)

// servant is one registered servant. Immutable after Start.
type servant struct {
	name  string
	funcs map[string]*function
}

// function is one registered function of a servant. Immutable after Start.
type function struct {
	name string
	h    HandlerFunc
}

// Server is a TARS server on gnet event loops. Create it with New, register handlers with
// Handle or HandleProto, then Start it; Stop shuts it down. A Server runs once.
//
// Handle, Start, Addr and Stop are safe for concurrent use.
type Server struct {
	// Immutable after New.
	opts   options
	log    *zap.Logger
	icpt   interceptor.Server // around every handler call; nil: none
	stats  *stats.Shared      // requests served, when WithStats; nil: not counted
	panics lograte.Limiter    // a handler's panics (and Goexits) are logged once a second at most, per function
	// peerLines limits the lines a peer can repeat at will (peerLine): refused authentications,
	// connections closed for their replies not read, connections not enrolled for want of a
	// descriptor.
	peerLines lograte.Limiter

	mu       sync.Mutex // guards the following
	state    int
	started  bool                // Start was called
	servants map[string]*servant // read without mu by loops and workers once started
	addr     net.Addr

	// Set by Start before it closes ready; read-only afterwards.
	ready   chan struct{}   // closed when Start has returned
	booted  bool            // the engine runs: Stop must shut it down
	eng     gnet.Engine     // the running engine
	baseCtx context.Context // handlers' ctx; cancelled when Stop gives up waiting
	epoch   time.Time       // the origin of clock (worker.go)
	cancel  context.CancelFunc
	jobs    chan *job // worker queue; nil in inline mode
	// TLS handshakes of a WithTLS server, each on a goroutine until it hands its connection to
	// the loop; tlsStop ends them.
	handshakes sync.WaitGroup
	tlsStop    context.Context
	tlsCancel  context.CancelFunc

	// A stream server's own listener and the client engine its connections are enrolled with
	// (accept.go); nil for a datagram server, which runs gnet's engine (gnet.Run).
	ln         net.Listener
	cli        *gnet.Client
	acceptStop chan struct{}  // closed by Stop: the accept loop ends
	lnOnce     sync.Once      // closeListener's
	acceptDone chan struct{}  // closed when the accept loop has ended
	enrolling  sync.WaitGroup // connections accepted and being enrolled with a loop

	// Completion of the goroutines Start starts.
	runDone     chan struct{} // closed when the engine has stopped (gnet.Run returned, Client.Stop)
	runErr      error         // the engine's result; read after runDone
	tornDown    chan struct{} // closed when teardown has ended: the engine's end released what it held
	workersDone chan struct{} // closed when the last worker has exited
	workersLeft atomic.Int32
	bigWriters  running      // goroutines finishing large replies (bigwrite.go)
	bigStarted  atomic.Int64 // how many were started (tests look)
	bodiesTaken atomic.Int64 // large reply bodies written from their handler's scratch (tests look)

	// Shared by loops, workers and Stop.
	stopping atomic.Bool // Stop began: refuse new requests
	forced   atomic.Bool // Stop gave up waiting: queued jobs are refused, not run
	// forcedRefusals counts the queued requests refused after Stop gave up (refuseJob).
	forcedRefusals atomic.Int64
	inflight       atomic.Int64 // requests handed to workers whose replies are not yet written
	// queuedBytes counts the frames of requests handed to workers and not finished
	// (WithQueueBytes, worker.go).
	queuedBytes atomic.Int64
	idle        chan struct{} // closed when inflight drops to 0 while stopping
	idleOnce    sync.Once

	loopsMu sync.Mutex               // guards loops
	loops   map[gnet.EventLoop]*loop // per-event-loop state, created on first connection

	// engineMu orders workers' EventLoop.Execute calls before gnet closes the loops'
	// pollers: Execute on a closed poller would write to a stale eventfd number.
	engineMu   sync.RWMutex
	engineDown bool // OnShutdown ran: Execute no more

	addrStr atomic.Pointer[string] // the bound address as text, for stats and interceptors

	lim    serverLimits    // WithMaxConns, WithIdleTimeout, WithBacklog, WithMaxBacklog (limits.go)
	budget *inbound.Budget // WithFrameBudget, shared by the connections' Assemblers; nil: none

	// UDP (udp.go). Set by Start and OnBoot before the loops serve; read-only afterwards,
	// except replyFD, which the last worker closes.
	udp        bool         // serving datagrams
	udp6       bool         // on an IPv6 socket
	replyFD    int          // the socket workers send replies from, when hasReplyFD
	hasReplyFD bool         //
	dropped    atomic.Int64 // datagrams dropped (DroppedDatagrams)

	shutdownOnce  sync.Once
	teardownOnce  sync.Once
	closeJobsOnce sync.Once
}

// New returns a Server configured by opts. It starts nothing: Start does.
func New(opts ...Option) *Server {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil { // an option chosen at run time and left unset
			opt(&o)
		}
	}
	s := &Server{
		opts:        o,
		log:         o.logger.Named("server"),
		icpt:        interceptor.ChainServer(o.icpt...), // info.Ret: the code the client gets
		servants:    make(map[string]*servant),
		ready:       make(chan struct{}),
		runDone:     make(chan struct{}),
		tornDown:    make(chan struct{}),
		workersDone: make(chan struct{}),
		idle:        make(chan struct{}),
		loops:       make(map[gnet.EventLoop]*loop),
	}
	if o.stats {
		s.stats = new(stats.Shared)
	}
	s.epoch = time.Now()
	s.lim.window = backlogWindow
	if o.frameBudget > 0 {
		s.budget = inbound.NewBudget(int64(o.frameBudget))
	}
	return s
}

// Handle registers h as function fn of servant servantName (for example
// "App.Server.GreeterObj" and "SayHello"). Register every handler before Start; afterwards
// Handle returns ErrStarted (ErrStopped after Stop). Registering the same function twice is an
// error. `tars_ping` is answered with RetOK and an empty body on every registered servant,
// unless a handler is registered for it.
func (s *Server) Handle(servantName, fn string, h HandlerFunc) error {
	if s == nil {
		// serverconf's Servers.Server returns nil for a servant no adapter serves: a name that
		// differs from the configuration's by a letter gets here, and is told so.
		return fmt.Errorf("tarscomm/server: Handle(%q, %q): nil *Server (no adapter serves %q?)", servantName, fn, servantName)
	}
	if servantName == "" || fn == "" {
		return fmt.Errorf("tarscomm/server: Handle(%q, %q): empty servant or function name", servantName, fn)
	}
	if h == nil {
		return fmt.Errorf("tarscomm/server: Handle(%q, %q): nil handler", servantName, fn)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateRunning:
		return ErrStarted
	case stateStopped:
		return ErrStopped
	}
	sv := s.servants[servantName]
	if sv == nil {
		sv = &servant{name: servantName, funcs: make(map[string]*function)}
		s.servants[servantName] = sv
	}
	if _, dup := sv.funcs[fn]; dup {
		return fmt.Errorf("tarscomm/server: Handle(%q, %q): function already registered", servantName, fn)
	}
	sv.funcs[fn] = &function{name: fn, h: h}
	return nil
}

// Start listens on addr ("127.0.0.1:0" picks a free port; a gnet address such as
// "tcp://:18015" or "unix:///tmp/s.sock" is used as is) and serves in the background. It
// returns the bound address once the listener accepts connections. Start runs once; a failed
// Start leaves the Server stopped, except when addr is written as a proxy string's endpoint
// ("tcp -h 127.0.0.1 -p 18015"): that is refused before anything starts, with the address to
// write instead.
func (s *Server) Start(addr string) (net.Addr, error) {
	if hint, ok := endpointForm(addr); ok {
		return nil, fmt.Errorf("tarscomm/server: Start(%q): Start takes host:port (or tcp://, udp://, unix:// addresses), not the endpoint form of proxy strings and serverconf%s", addr, hint)
	}
	s.mu.Lock()
	switch s.state {
	case stateRunning:
		s.mu.Unlock()
		return nil, ErrStarted
	case stateStopped:
		s.mu.Unlock()
		return nil, ErrStopped
	}
	s.state = stateRunning
	s.started = true
	s.mu.Unlock()
	defer close(s.ready)

	protoAddr := addr
	if !strings.Contains(addr, "://") {
		protoAddr = "tcp://" + addr
	}
	loops := s.opts.numEventLoop
	if loops <= 0 {
		loops = runtime.GOMAXPROCS(0)
	}
	if s.udp = isUDP(protoAddr); s.udp {
		if s.opts.tls != nil || s.opts.authKeys != nil {
			s.mu.Lock()
			s.state = stateStopped
			s.mu.Unlock()
			close(s.workersDone)
			return nil, fmt.Errorf("tarscomm/server: start on %s: %w", addr, errUDPOptions)
		}
		if err := udpPortFree(protoAddr); err != nil {
			s.mu.Lock()
			s.state = stateStopped
			s.mu.Unlock()
			close(s.workersDone)
			return nil, fmt.Errorf("tarscomm/server: start on %s: %w", addr, err)
		}
		loops = udpLoops(protoAddr, loops)
	}

	s.baseCtx, s.cancel = context.WithCancel(context.Background())
	if n := s.opts.workers; n > 0 {
		s.jobs = make(chan *job, s.opts.queueCap)
		s.workersLeft.Store(int32(n))
		for range n {
			go s.work()
		}
	} else {
		close(s.workersDone)
	}

	gopts := []gnet.Option{
		gnet.WithLogger(gnetlog.New(s.opts.logger)),
		gnet.WithNumEventLoop(loops),
		gnet.WithReuseAddr(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
	}
	if s.lim.tick = s.sweepTick(); s.lim.tick > 0 {
		gopts = append(gopts, gnet.WithTicker(true)) // OnTick sweeps the limits (limits.go)
	}
	var err error
	s.tlsStop, s.tlsCancel = context.WithCancel(context.Background())

	booted := make(chan error, 1)
	ev := &events{s: s, booted: booted}
	if s.lim.tick > 0 {
		ev.ticking = make(chan struct{})
	}
	if s.udp {
		go func() {
			defer close(s.runDone)
			s.runErr = gnet.Run(ev, protoAddr, gopts...)
		}()
	} else if err = s.startStream(ev, protoAddr, gopts); err != nil {
		s.runErr = err // before runDone closes: the select below may take either channel
		close(s.runDone)
		select {
		case <-booted: // OnBoot ran before the loops failed to start
		default:
		}
		booted <- err
	}

	select {
	case err = <-booted:
		if err == nil {
			if ev.ticking != nil {
				// gnet calls OnBoot before it starts the loops' goroutines, and the ticker's
				// last: its first OnTick means every goroutine of the engine exists, so that
				// Start returns with the server's goroutines all started (a leak check that
				// snapshots them after Start sees them all).
				select {
				case <-ev.ticking:
				case <-s.runDone:
				}
			}
			s.booted = true
			if s.ln != nil {
				go s.acceptLoop(s.ln, s.cli)
			}
			s.log.Debug("listening", zap.Stringer("endpoint", s.addr), zap.Int("loops", loops),
				zap.Int("workers", s.opts.workers))
			return s.addr, nil
		}
		<-s.runDone
	case <-s.runDone:
		err = s.runErr
		if err == nil {
			err = errors.New("engine exited before it booted")
		}
	}
	// The engine never ran: release what Start started.
	s.tlsCancel()
	s.closeJobsOnce.Do(s.closeJobs)
	<-s.workersDone
	s.cancel()
	s.mu.Lock()
	s.state = stateStopped
	s.mu.Unlock()
	return nil, fmt.Errorf("tarscomm/server: start on %s: %w", addr, err)
}

// endpointForm reports whether addr is written as a TARS endpoint ("tcp -h 127.0.0.1 -p 18015"),
// which Start does not take, and the address to write instead when it can tell (": write
// \"127.0.0.1:18015\"").
func endpointForm(addr string) (hint string, ok bool) {
	words := strings.Fields(addr)
	if len(words) < 2 || !strings.HasPrefix(words[1], "-") {
		return "", false
	}
	scheme := ""
	switch words[0] {
	case "tcp":
	case "udp":
		scheme = "udp://"
	case "ssl":
		return ": serve TLS with WithTLS on a host:port", true
	default:
		return "", false
	}
	var host, port string
	for i := 1; i+1 < len(words); i++ {
		switch words[i] {
		case "-h":
			host = words[i+1]
		case "-p":
			port = words[i+1]
		}
	}
	if host == "" || port == "" {
		return "", true
	}
	return fmt.Sprintf(": write %q", scheme+net.JoinHostPort(host, port)), true
}

// Addr returns the address Start bound, or nil before Start succeeded.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Stop shuts the server down gracefully: it closes its listener (a client dialling it is
// refused), tells the clients of the open connections (a notice a tarscomm client takes the
// endpoint out of rotation on) and refuses new requests on them (answered with
// codec.RetOverload and codec.StoppingDesc: a tarscomm client sends them to another endpoint,
// as they did not run), waits for the handlers in flight and the writing of their replies
// (until the clients have taken them from the sockets' send queues), then closes every
// connection and waits until every goroutine the Server started has exited. If ctx ends first,
// Stop cancels the ctx handed to handlers, refuses the requests still queued for a worker as it
// refuses new ones (they did not run; it waits up to 100 ms more for those answers to be
// written), and returns ctx.Err() as soon as it can no longer wait (the rest goes on without
// it: the workers exit, and release what they held, as their handlers return); calling Stop
// again waits for the rest. Stop on a Server that
// never started returns nil. A Stop called from a handler waits for that handler too (until its
// ctx ends): call it from another goroutine. A nil ctx is refused (ErrNilContext) before
// anything stops.
func (s *Server) Stop(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	s.mu.Lock()
	started := s.started
	s.state = stateStopped
	s.mu.Unlock()
	if !started {
		return nil
	}
	s.stopping.Store(true) // before Start is done too: the loops refuse from their first request
	select {
	case <-s.ready: // first: a Stop with a ctx already ended still shuts a started server down
	default:
		select {
		case <-s.ready:
		case <-ctx.Done():
			// Start is still under way: the engine is shut down once it is, whatever Start does
			// (a later Stop waits for the rest).
			go func() {
				<-s.ready
				if s.booted {
					s.force()
					s.shutdownOnce.Do(s.shutdownEngine)
					s.teardownOnce.Do(s.startTeardown)
				}
			}()
			return ctx.Err()
		}
	}
	if !s.booted {
		return nil // Start failed and cleaned up
	}
	if s.cli != nil {
		s.closeListener() // a client dialling now is refused, not accepted and closed
		s.noticeStopping()
	}

	var idleErr error
	if !s.forced.Load() { // a Stop that gave up already stopped counting replies
		if idleErr = s.waitIdle(ctx); idleErr == nil {
			idleErr = s.bigWriters.wait(ctx) // the large replies already written in part
		}
		if idleErr == nil {
			idleErr = s.waitWritten(ctx) // gnet's close drops what a socket does not take at once
		}
		if idleErr != nil {
			s.force()
			s.refuseQueued()
			s.writeRefusals()
		}
	}
	s.shutdownOnce.Do(s.shutdownEngine)
	s.teardownOnce.Do(s.startTeardown)
	if err := wait(ctx, s.tornDown); err != nil {
		s.force()
		return err
	}
	if err := wait(ctx, s.workersDone); err != nil {
		s.force()
		return err
	}
	s.cancel()
	if idleErr != nil {
		return idleErr
	}
	if s.runErr != nil {
		return fmt.Errorf("tarscomm/server: engine: %w", s.runErr)
	}
	return nil
}

// refusalGrace bounds how long a Stop that gave up waits for the refusals of the requests it
// took from the worker queue to be written, past its ctx: the engine's close drops what the
// connections have not written.
const refusalGrace = 100 * time.Millisecond

// writeRefusals waits, at most refusalGrace, until the connections have written what they hold,
// when a Stop that gave up refused queued requests (refuseQueued): their clients learn that they
// did not run instead of losing the connection under them.
func (s *Server) writeRefusals() {
	if s.forcedRefusals.Load() == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), refusalGrace)
	defer cancel()
	_ = s.waitWritten(ctx)
}

// force makes Stop stop waiting for handlers: queued jobs are refused (refuseJob), handlers' ctx
// cancelled.
func (s *Server) force() {
	s.forced.Store(true)
	s.cancel()
}

// waitIdle waits until no request handed to a worker awaits its reply.
//
// Once stopping is set, a request counts in inflight only briefly before it is refused
// (dispatch counts it before it checks stopping), so when inflight reaches 0 after stopping
// was set, no handler runs or will run: done closes idle then.
func (s *Server) waitIdle(ctx context.Context) error {
	if s.inflight.Load() == 0 {
		return nil
	}
	return wait(ctx, s.idle)
}

// writtenPoll is how often Stop looks again for replies not yet written (waitWritten).
const writtenPoll = 5 * time.Millisecond

// waitWritten waits until every open connection has written the replies it holds to its socket
// (gnet's outbound buffer, a large-reply writer's rest, the replies held behind it, worker
// replies not handed over yet), or ctx ends. Stop closes the connections only then: gnet's
// close writes what it can without blocking and drops the rest. A client that does not read
// its replies keeps Stop waiting here until ctx ends.
func (s *Server) waitWritten(ctx context.Context) error {
	for {
		n, err := s.unwritten(ctx)
		if err != nil || n == 0 {
			return err
		}
		t := time.NewTimer(writtenPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// unwritten returns the reply bytes the open connections have not written to their sockets,
// counted by each loop on its own goroutine; a loop that no longer runs tasks counts none.
func (s *Server) unwritten(ctx context.Context) (int, error) {
	s.loopsMu.Lock()
	ls := make([]*loop, 0, len(s.loops))
	for _, l := range s.loops {
		if !l.lost.Load() { // it runs no task any more (goexit.go)
			ls = append(ls, l)
		}
	}
	s.loopsMu.Unlock()
	counts := make(chan int, len(ls))
	asked := 0
	s.engineMu.RLock()
	for _, l := range ls {
		if s.engineDown {
			break
		}
		if l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			counts <- l.unwritten()
			return nil
		})) == nil {
			asked++
		}
	}
	s.engineMu.RUnlock()
	total := 0
	for range asked {
		select {
		case n := <-counts:
			total += n
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return total, nil
}

// unwritten returns the reply bytes l's open connections hold, those in their sockets' send
// queues included: a socket closed while its client still sends is reset, and the reset drops
// what the kernel has not delivered (a client pipelining calls lost the replies of calls the
// server had run). Once a socket's queue is empty the client holds every reply, and a close
// that resets the connection then loses none. It runs on the loop goroutine.
func (l *loop) unwritten() int {
	n := 0
	for _, cs := range l.conns {
		if cs.c == nil {
			continue
		}
		u, _ := l.backlog(cs)
		if u == 0 {
			u = int(sockq.Unsent(sockq.Fd(cs.c)))
		}
		n += u
	}
	return n
}

// done records that n requests handed to workers are finished (replied or dropped).
func (s *Server) done(n int64) {
	if s.inflight.Add(-n) == 0 && s.stopping.Load() {
		s.idleOnce.Do(s.closeIdle)
	}
}

func (s *Server) closeIdle() { close(s.idle) }

// shutdownEngine asks the gnet engine to stop without waiting: Engine.Stop polls for the end
// every 500 ms, so it is called with a context that is already done, and Stop waits for
// gnet.Run to return instead.
func (s *Server) shutdownEngine() {
	if s.cli != nil {
		// A stream server: no Enroll may race Client.Stop (accept.go), which waits for the
		// loops; Stop waits for runDone with its ctx.
		go func() {
			defer close(s.runDone)
			s.stopAccepting()
			s.runErr = s.cli.Stop()
		}()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.eng.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("engine stop", zap.Error(err))
	}
}

// startTeardown starts the goroutine that releases what the engine's end frees, once the
// engine has been asked to stop: it runs to its end whether or not a Stop still waits, so that a
// Stop that gave up at its deadline leaves nothing for a second Stop to finish (the workers
// waited on a queue nobody closed, and a UDP server's reply socket, a duplicate of the one it
// served, kept its port bound).
func (s *Server) startTeardown() { go s.teardown() }

// teardown waits for the engine to end, then for the large-reply writers (the engine closed
// their connections, which stops them) and the TLS handshakes (cancelled here), and closes the
// job queue: the loops have exited, nothing sends on it any more, and the workers exit once
// their handlers return (the last one closes the reply socket).
func (s *Server) teardown() {
	defer close(s.tornDown)
	<-s.runDone
	_ = s.bigWriters.wait(context.Background())
	s.tlsCancel()
	s.handshakes.Wait()
	s.closeJobsOnce.Do(s.closeJobs)
}

func (s *Server) closeJobs() {
	if s.jobs != nil {
		close(s.jobs)
	}
}

// wait waits for ch to be closed or ctx to end.
func wait(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// routeCache remembers the last servant and function a loop routed to: pipelined requests
// mostly call the same function, and comparing names is cheaper than hashing them.
type routeCache struct {
	sv *servant
	f  *function // a function of sv, or nil
}

// route finds the handler of the request named servantName.fn and sets req's names (the
// registered strings, so that known names cost no allocation). With no handler it returns the
// code and description of the reply to send instead (RetOK for tars_ping). rc is the calling
// loop's cache.
func (s *Server) route(req *codec.RequestPacket, servantName, fn []byte, rc *routeCache) (h HandlerFunc, ret int32, desc string) {
	if req.Version != codec.VersionTars {
		req.ServantName, req.FuncName = string(servantName), string(fn)
		return nil, codec.RetServerDecode, unserved(req.Version)
	}
	sv := rc.sv
	if sv == nil || sv.name != string(servantName) {
		if sv = s.servants[string(servantName)]; sv == nil {
			req.ServantName, req.FuncName = string(servantName), string(fn)
			return nil, codec.RetNoServant, "no such servant: " + req.ServantName
		}
		rc.sv, rc.f = sv, nil
	}
	req.ServantName = sv.name
	f := rc.f
	if f == nil || f.name != string(fn) {
		if f = sv.funcs[string(fn)]; f == nil {
			if string(fn) == codec.FuncPing {
				req.FuncName = codec.FuncPing
				if s.stopping.Load() {
					// Not alive for long: a tarscomm client's health probe must not bring the
					// endpoint back into rotation while its server stops.
					return nil, codec.RetOverload, stoppingDesc
				}
				return nil, codec.RetOK, ""
			}
			req.FuncName = string(fn)
			return nil, codec.RetNoFunc, "no such function: " + req.ServantName + "." + req.FuncName
		}
		rc.f = f
	}
	req.FuncName = f.name
	return f.h, codec.RetOK, ""
}

// invoke runs h, turning its error or panic into a return code and description. The handler's
// ctx comes from ctxs, the calling loop's or worker's (deadline.go).
func (s *Server) invoke(ctxs *callCtxs, h HandlerFunc, cur *Current, req, rsp []byte) (body []byte, ret int32, desc string) {
	if s.stats != nil {
		start := time.Now()
		defer func() { s.record(cur, ret, time.Since(start)) }() // after the recovery below
	}
	ctx := ctxs.parent(s)
	cur.DyeingKey, cur.Dyed = dye.FromRequest(cur.MessageType, cur.Status)
	if cur.Dyed {
		ctx = dye.WithKey(ctx, cur.DyeingKey)
	}
	if len(cur.Status) > 0 {
		if c := cookie.FromRequest(cur.Status); c != nil {
			ctx = cookie.WithCookies(ctx, c) // the handler's calls carry them on
		}
		if id, ok := tracekey.FromRequest(cur.MessageType, cur.Status); ok {
			ctx = tracekey.WithTraceID(ctx, id) // and the trace, under new spans
		}
	}
	due := int64(noDue)
	if cur.Timeout > 0 {
		due = cur.received + int64(cur.Timeout)*int64(time.Millisecond)
	}
	cc := ctxs.next(ctx, s, due)
	ctx = cc
	returned := false
	defer func() {
		cc.end()
		if r := recover(); r != nil {
			e := s.panicked(cur, r)
			body, ret, desc = nil, e.Code, e.Desc
		} else if !returned {
			// runtime.Goexit in the handler: the goroutine ends after the deferred calls, and
			// its caller's own deferred call answers the request (work, loop.serve).
			if ok, left := s.panics.Allow(cur.Servant + "\x00" + cur.Func + "\x00goexit"); ok { // as panics
				s.log.Error("handler ended its goroutine (runtime.Goexit, t.FailNow): answered "+goexitDesc,
					zap.String("servant", cur.Servant), zap.String("func", cur.Func), zap.Uint64("suppressed", left))
			}
			body, ret, desc = nil, codec.RetUnknown, goexitDesc // for the stats
		}
	}()
	var err error
	if s.icpt != nil {
		body, err = s.intercept(ctx, h, cur, req, rsp)
	} else {
		body, err = s.handle(ctx, h, cur, req, rsp)
	}
	returned = true
	if err != nil {
		// The code is interceptor.RetOf's, which the interceptors saw: an *Error's, or any
		// error's with a TARSCode method.
		ret := interceptor.RetOf(err)
		if e, ok := errors.AsType[*Error](err); ok {
			if e == nil {
				return nil, codec.RetUnknown, nilErrorDesc
			}
			return nil, ret, e.Desc
		}
		return nil, ret, err.Error()
	}
	return body, codec.RetOK, ""
}

// handle runs h. A reply that cannot be sent, its frame above max-packet-size (or, on udp, above
// a datagram), is an error with RetServerEncode, which the interceptors and the stats see as the
// client will: a client with the same limit would close its connection on the frame's length.
// The size is reckoned from the body and the reply's maps, at most the frame's (a frame that
// fits is never refused here); the encoders check the exact size again (replies.add,
// appendDatagramReply), and refuse the few frames within replyHeader's margin of the limit
// after the interceptors saw success. A one-way request gets no reply.
func (s *Server) handle(ctx context.Context, h HandlerFunc, cur *Current, req, rsp []byte) ([]byte, error) {
	body, err := h(ctx, cur, req, rsp)
	if err != nil || cur.PacketType == codec.PacketOneway {
		return body, err
	}
	n := len(body) + replyHeader + mapSize(cur.ResponseContext) + mapSize(cur.ResponseStatus)
	if limit := s.replyLimit(); n > limit {
		return nil, &Error{Code: codec.RetServerEncode, Desc: "server: reply of at least " + strconv.Itoa(n) +
			" bytes exceeds max-packet-size " + strconv.Itoa(limit)}
	}
	return body, nil
}

// replyLimit is the largest reply frame s sends: max-packet-size, and on udp a datagram.
func (s *Server) replyLimit() int {
	if s.udp {
		return min(s.opts.maxPacketSize, datagram.MaxSize)
	}
	return s.opts.maxPacketSize
}

// replyHeader is at most the smallest a reply frame holds besides its body and maps (18 bytes
// with a small body and request id): the length, the heads and values of its version, packet
// type, request id, message type and return code, the body's list head.
const replyHeader = 16

// mapSize is at least what m takes in a reply frame: its keys and values and a head each.
func mapSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v) + 4
	}
	return n
}

// goexitDesc is the result description of a request whose handler called runtime.Goexit.
const goexitDesc = "handler ended its goroutine (runtime.Goexit)"

// panicked logs the panic r of the handler (or an interceptor) serving cur, and returns the
// error it is answered with: codec.RetUnknown.
func (s *Server) panicked(cur *Current, r any) *Error {
	// A client can make a handler panic on every request: the log gets one line a second per
	// function, with its stack, and the count of those it stands for.
	if ok, left := s.panics.Allow(cur.Servant + "\x00" + cur.Func); ok {
		s.log.Error("handler panicked", zap.String("servant", cur.Servant),
			zap.String("func", cur.Func), zap.Any("panic", r), zap.Uint64("suppressed", left), zap.StackSkip("stack", 3))
	}
	return &Error{Code: codec.RetUnknown, Desc: fmt.Sprintf("handler panicked: %v", r)}
}

// fillCurrent describes req (decoded from a connection to remote, in the read of loop l) in cur.
func (l *loop) fillCurrent(cur *Current, req *codec.RequestPacket, remote net.Addr) {
	if req.Timeout > 0 {
		cur.received = l.readAt() // the handler's deadline counts from it
	}
	cur.Servant, cur.Func = req.ServantName, req.FuncName
	cur.RequestID = req.RequestID
	cur.Version = req.Version
	cur.PacketType = req.PacketType
	cur.MessageType = req.MessageType
	cur.Timeout = req.Timeout
	cur.Context, cur.Status = req.Context, req.Status
	cur.RemoteAddr = remote
	cur.ResponseContext, cur.ResponseStatus = nil, nil
}

// appendReply appends the whole frame answering req to b, using rp as scratch (left holding no
// reference to the body or the maps). A TUP request's refusal is a TUP reply (tupRefusal).
func appendReply(b []byte, rp *codec.ResponsePacket, req *codec.RequestPacket, ret int32, desc string,
	body []byte, cur *Current) []byte {
	if tup(req.Version) {
		return tupRefusal(b, req, ret, desc)
	}
	fillResponse(rp, req, ret, desc, body, cur)
	b = codec.AppendResponse(b, rp)
	rp.Buffer, rp.Context, rp.Status = nil, nil, nil
	return b
}

// tup reports whether iVersion v is TUP's, in either form: TUP requests get TUP-shaped replies.
// TarsJava's and TarsNode's servers answer version 2 as they answer 3, and TarsNode's client
// reads the replies of both as requests.
func tup(v int16) bool { return v == codec.VersionTup || v == codec.VersionTupComplex }

// unserved is the description of the refusal of a request of iVersion v: the server reads TARS
// requests (iVersion 1, protobuf services' too) only. TUP (2, 3), XML (4) and JSON (5) requests,
// which TarsCpp and TarsGo servers also serve, are answered codec.RetServerDecode with it
// before any handler runs: a handler would read their bodies as TARS fields.
func unserved(v int16) string {
	name := ""
	switch v {
	case codec.VersionTup, codec.VersionTupComplex:
		name = " (TUP)"
	case codec.VersionXML:
		name = " (XML)"
	case codec.VersionJSON:
		name = " (JSON)"
	}
	return "server: request version " + strconv.Itoa(int(v)) + name + " is not served: only TARS (version 1)"
}

// emptyUniAttribute is an empty TUP body: an empty map at tag 0.
var emptyUniAttribute = []byte{0<<4 | codec.TypeMap, 0<<4 | codec.TypeZero}

// tupRefusal appends the reply refusing the TUP request req with ret and desc: shaped as a
// request, as TUP replies are (TarsCpp's servers answer TUP so), the code and description in its
// status under STATUS_RESULT_CODE and STATUS_RESULT_DESC, an empty UniAttribute for body.
func tupRefusal(b []byte, req *codec.RequestPacket, ret int32, desc string) []byte {
	return codec.AppendRequest(b, &codec.RequestPacket{
		Version: req.Version, PacketType: codec.PacketNormal, MessageType: req.MessageType,
		RequestID: req.RequestID, ServantName: req.ServantName, FuncName: req.FuncName,
		Buffer: emptyUniAttribute,
		Status: map[string]string{"STATUS_RESULT_CODE": strconv.Itoa(int(ret)), "STATUS_RESULT_DESC": desc},
	})
}

// fillResponse sets rp to the response answering req.
func fillResponse(rp *codec.ResponsePacket, req *codec.RequestPacket, ret int32, desc string, body []byte, cur *Current) {
	rp.Version = req.Version
	rp.PacketType = codec.PacketNormal // whatever the request's, as TarsCpp's Current::sendResponse
	rp.RequestID = req.RequestID
	rp.MessageType = req.MessageType
	rp.Ret = ret
	rp.Buffer = body
	rp.ResultDesc = desc
	rp.Status, rp.Context = nil, nil
	if cur != nil {
		rp.Status, rp.Context = cur.ResponseStatus, cur.ResponseContext
	}
}
