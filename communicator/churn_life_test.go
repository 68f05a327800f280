package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// The life of a call under churn: many callers make every kind of call on several proxies
// (several connections per endpoint, short connections, udp, with and without interceptors)
// while their contexts are cancelled at random moments, deadlines are tiny or long, the
// endpoint lists change every few milliseconds, the servers are stopped (mid-request) and
// started again on the same ports, backups and retries are on, and the Communicators are
// closed mid-traffic. Every reply must answer its own request, every accepted callback must run
// exactly once and before Close returns, and nothing may hang. (A guard: it passed when
// written, session 16's review of a call's life under churn.)

const (
	rcObjConns = "Churn.Life.ConnsObj" // connections = 3, retries, backups, breaker, p2c
	rcObjShort = "Churn.Life.ShortObj" // short connections, least-inflight, backups
	rcObjUDP   = "Churn.Life.UDPObj"   // udp endpoints
	rcFnPlain  = "Echo"
	rcFnIdem   = "EchoIdem"
)

// rcServer is one endpoint: a project server on a fixed port, stopped and started again.
type rcServer struct {
	addr string // host:port, kept across restarts
	udp  bool

	mu  sync.Mutex
	srv *server.Server // nil while stopped
}

func rcHandler(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
	switch n := rand.IntN(40); {
	case n == 0:
		// Returns after its client gave up (or 30 ms).
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Millisecond):
		}
	case n < 10:
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
	}
	return &hellopb.HelloReply{Message: req.GetName(), Seq: req.GetSeq()}, nil
}

func rcNewServer(udp bool) *server.Server {
	s := server.New(server.WithLogger(zap.NewNop()), server.WithNumEventLoop(1), server.WithWorkers(32))
	for _, obj := range []string{rcObjConns, rcObjShort, rcObjUDP} {
		for _, fn := range []string{rcFnPlain, rcFnIdem} {
			if err := server.HandleProto(s, obj, fn, rcHandler); err != nil {
				panic(err)
			}
		}
	}
	return s
}

func rcStart(t *testing.T, udp bool) *rcServer {
	t.Helper()
	s := rcNewServer(udp)
	addr := "127.0.0.1:0"
	if udp {
		// A udp server needs a port: take one from the kernel.
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = pc.LocalAddr().String()
		_ = pc.Close()
		addr = "udp://" + addr
	}
	a, err := s.Start(addr)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	r := &rcServer{addr: a.String(), udp: udp, srv: s}
	t.Cleanup(func() { r.stop(time.Second) })
	return r
}

func (r *rcServer) ep() endpoint.Endpoint {
	host, port, _ := net.SplitHostPort(r.addr)
	proto := "tcp"
	if r.udp {
		proto = "udp"
	}
	e, err := endpoint.ParseEndpoint(fmt.Sprintf("%s -h %s -p %s -t 60000", proto, host, port))
	if err != nil {
		panic(err)
	}
	return e
}

// stop stops the server, giving its handlers at most grace (a short grace stops it
// mid-request).
func (r *rcServer) stop(grace time.Duration) {
	r.mu.Lock()
	s := r.srv
	r.srv = nil
	r.mu.Unlock()
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	_ = s.Stop(ctx)
	cancel()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	_ = s.Stop(ctx) // waits for the rest
	cancel()
}

// restart starts the server again on its port; it tries for a while (the port may linger).
func (r *rcServer) restart() {
	addr := r.addr
	if r.udp {
		addr = "udp://" + addr
	}
	for range 50 {
		s := rcNewServer(r.udp)
		if _, err := s.Start(addr); err == nil {
			r.mu.Lock()
			r.srv = s
			r.mu.Unlock()
			return
		}
		_ = s.Stop(context.Background())
		time.Sleep(5 * time.Millisecond)
	}
}

// rcSource is a naming source whose lists the test sets per object.
type rcSource struct {
	mu      sync.Mutex
	lists   map[string]naming.List
	watches map[string][]*rcWatch
}

type rcWatch struct {
	mu      sync.Mutex
	push    func(naming.List)
	stopped bool
}

func (s *rcSource) Watch(q naming.Query, push func(naming.List)) func() {
	w := &rcWatch{push: push}
	w.mu.Lock()
	s.mu.Lock()
	l, ok := s.lists[q.Object]
	s.watches[q.Object] = append(s.watches[q.Object], w)
	s.mu.Unlock()
	if ok {
		w.push(l)
	}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.stopped = true
		w.mu.Unlock()
	}
}

func (s *rcSource) set(obj string, l naming.List) {
	s.mu.Lock()
	s.lists[obj] = l
	ws := append([]*rcWatch(nil), s.watches[obj]...)
	s.mu.Unlock()
	for _, w := range ws {
		w.mu.Lock()
		if !w.stopped {
			w.push(l)
		}
		w.mu.Unlock()
	}
}

func rcSubset(rng *rand.Rand, all []endpoint.Endpoint) naming.List {
	var l naming.List
	if rng.IntN(30) == 0 {
		return l // no endpoint at all for a moment
	}
	for _, e := range all {
		switch rng.IntN(4) {
		case 0:
			l.Inactive = append(l.Inactive, e)
		case 1:
		default:
			l.Active = append(l.Active, e)
		}
	}
	if len(l.Active) == 0 {
		l.Active = []endpoint.Endpoint{all[rng.IntN(len(all))]}
		l.Inactive = nil
	}
	return l
}

// rcRec is the ledger of one call.
type rcRec struct {
	id        uint64
	what      string
	async     bool // a callback is expected (AsyncInvoke accepted it) or a future
	begunLate bool // begun after Close returned
	accepted  atomic.Bool
	ends      atomic.Int32 // completions seen (return, callback, future)
	afterEnd  atomic.Bool  // a completion came after Close returned
	lateErr   atomic.Pointer[string]
}

type rcLedger struct {
	mu      sync.Mutex
	recs    []*rcRec
	ids     atomic.Uint64
	closed  atomic.Bool // Close has returned
	wrong   atomic.Int64
	wrongEx atomic.Pointer[string]
	classes sync.Map // error class -> *atomic.Int64
}

func (l *rcLedger) newRec(what string, async bool) *rcRec {
	r := &rcRec{id: l.ids.Add(1), what: what, async: async, begunLate: l.closed.Load()}
	l.mu.Lock()
	l.recs = append(l.recs, r)
	l.mu.Unlock()
	return r
}

func (l *rcLedger) end(r *rcRec, name string, rsp *hellopb.HelloReply, body []byte, err error) {
	r.ends.Add(1)
	if l.closed.Load() && r.async && !r.begunLate {
		r.afterEnd.Store(true)
		es := fmt.Sprint(err)
		r.lateErr.Store(&es)
	}
	l.class(err)
	if err != nil {
		return
	}
	if body != nil {
		rsp = new(hellopb.HelloReply)
		if e := proto.Unmarshal(body, rsp); e != nil {
			l.bad(fmt.Sprintf("%s #%d: undecodable raw reply: %v", r.what, r.id, e))
			return
		}
	}
	if rsp == nil {
		return // one-way
	}
	if rsp.GetSeq() != r.id || rsp.GetMessage() != name {
		l.bad(fmt.Sprintf("%s #%d (%q): got the reply {%q, %d}", r.what, r.id, name, rsp.GetMessage(), rsp.GetSeq()))
	}
}

func (l *rcLedger) bad(s string) {
	l.wrong.Add(1)
	l.wrongEx.CompareAndSwap(nil, &s)
}

func (l *rcLedger) class(err error) {
	var se *communicator.ServerError
	c := "ok"
	switch {
	case err == nil:
	case errors.As(err, &se):
		c = fmt.Sprintf("server error %d", se.Code)
	case errors.Is(err, communicator.ErrTimeout):
		c = "timeout"
	case errors.Is(err, context.Canceled):
		c = "cancelled"
	case errors.Is(err, communicator.ErrClosed):
		c = "closed"
	case errors.Is(err, communicator.ErrConnection):
		c = "connection"
	case errors.Is(err, communicator.ErrNoEndpoint):
		c = "no endpoint"
	case errors.Is(err, communicator.ErrQueueFull):
		c = "queue full"
	case errors.Is(err, communicator.ErrOverload):
		c = "overload"
	default:
		c = "OTHER: " + err.Error()
	}
	v, _ := l.classes.LoadOrStore(c, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// rcCaller makes random calls on sps until stop.
func rcCaller(l *rcLedger, sps []*servantproxy.ServantProxy, seed uint64, stop <-chan struct{}, out *sync.WaitGroup) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for {
		select {
		case <-stop:
			return
		default:
		}
		sp := sps[rng.IntN(len(sps))]
		fn := rcFnPlain
		if rng.IntN(2) == 0 {
			fn = rcFnIdem
		}
		d := []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 30 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second}[rng.IntN(6)]
		ctx, cancel := context.WithTimeout(context.Background(), d)
		release := cancel
		switch rng.IntN(6) {
		case 0:
			cancel() // before the call
		case 1:
			tm := time.AfterFunc(time.Duration(rng.IntN(2000))*time.Microsecond, cancel)
			release = func() { tm.Stop(); cancel() }
		case 2:
			tm := time.AfterFunc(time.Duration(rng.IntN(30))*time.Millisecond, cancel)
			release = func() { tm.Stop(); cancel() }
		}
		var opts []servantproxy.CallOption
		if rng.IntN(8) == 0 {
			opts = append(opts, servantproxy.WithHash(rng.Uint64()))
		}
		kind := rng.IntN(7)
		async := kind == 1 || kind == 2 || kind == 5
		r := l.newRec(fmt.Sprintf("%s.%s kind %d", sp.Name(), fn, kind), async)
		name := fmt.Sprintf("n%d", r.id)
		req := &hellopb.HelloRequest{Name: name, Seq: r.id}
		switch kind {
		case 0: // sync
			rsp := new(hellopb.HelloReply)
			err := sp.Invoke(ctx, fn, req, rsp, opts...)
			l.end(r, name, rsp, nil, err)
			release()
		case 1: // async
			rsp := new(hellopb.HelloReply)
			out.Add(1)
			err := sp.AsyncInvoke(ctx, fn, req, rsp, func(err error) {
				l.end(r, name, rsp, nil, err)
				release()
				out.Done()
			}, opts...)
			if err != nil {
				r.async = false
				l.end(r, name, nil, nil, err)
				release()
				out.Done()
			} else {
				r.accepted.Store(true)
			}
		case 2: // future
			rsp := new(hellopb.HelloReply)
			out.Add(1)
			r.accepted.Store(true)
			f := sp.FutureInvoke(ctx, fn, req, rsp, opts...)
			if _, _, done := f.Result(); done {
				r.async = false // completed inside FutureInvoke (refused): no callback to check
			}
			f.OnDone(func(m proto.Message, err error) {
				if err == nil && m != rsp {
					l.bad(fmt.Sprintf("future #%d completed with another message", r.id))
				}
				l.end(r, name, rsp, nil, err)
				release()
				out.Done()
			})
		case 3: // one-way
			err := sp.InvokeOneway(ctx, fn, req, opts...)
			l.end(r, name, nil, nil, err)
			release()
		case 4: // raw sync
			b, _ := proto.Marshal(req)
			body, err := sp.InvokeRaw(ctx, fn, b, opts...)
			if err == nil && body == nil {
				body = []byte{}
			}
			l.end(r, name, nil, body, err)
			release()
		case 5: // raw async
			b, _ := proto.Marshal(req)
			out.Add(1)
			err := sp.AsyncInvokeRaw(ctx, fn, b, func(body []byte, err error) {
				if err == nil && body == nil {
					body = []byte{}
				}
				l.end(r, name, nil, body, err)
				release()
				out.Done()
			}, opts...)
			if err != nil {
				r.async = false
				l.end(r, name, nil, nil, err)
				release()
				out.Done()
			} else {
				r.accepted.Store(true)
			}
		case 6: // sync through a ctx that also carries a value (same path) with WithTimeout
			rsp := new(hellopb.HelloReply)
			err := sp.Invoke(ctx, fn, req, rsp, append(opts, servantproxy.WithTimeout(d))...)
			l.end(r, name, rsp, nil, err)
			release()
		}
	}
}

// rcWorld is the churn's servers, naming source and Communicators.
type rcWorld struct {
	comms     []*communicator.Communicator
	sps       []*servantproxy.ServantProxy
	stopChurn func()
}

func rcSetup(t *testing.T) *rcWorld {
	endToEnd(t)
	var tcps, udps []*rcServer
	for range 4 {
		tcps = append(tcps, rcStart(t, false))
	}
	for range 2 {
		udps = append(udps, rcStart(t, true))
	}
	var tcpEPs, udpEPs []endpoint.Endpoint
	for _, s := range tcps {
		tcpEPs = append(tcpEPs, s.ep())
	}
	for _, s := range udps {
		udpEPs = append(udpEPs, s.ep())
	}
	src := &rcSource{lists: map[string]naming.List{}, watches: map[string][]*rcWatch{}}
	// ShortObj's first list comes late: its first calls wait for it.
	src.set(rcObjConns, naming.List{Active: tcpEPs})
	src.set(rcObjUDP, naming.List{Active: udpEPs})

	edit := func(c *conf.Config) {
		c.NetThread = 2
		c.AsyncThread = 2
		c.TimeoutCheckInterval = 5 * time.Millisecond
		c.ConnectTimeout = 200 * time.Millisecond
		c.Health.TryInterval = 30 * time.Millisecond
		c.Servants = map[string]conf.Servant{
			rcObjConns: {Connections: 3, Retries: 2, BackupRequest: time.Millisecond, BackupBudget: 1,
				Idempotent: []string{rcFnIdem}, CircuitBreaker: true, LoadBalance: "p2c", MaxInflight: 100000},
			rcObjShort: {ShortConnections: true, Retries: 1, BackupRequest: 2 * time.Millisecond, BackupBudget: 1,
				Idempotent: []string{rcFnIdem}, LoadBalance: "least-inflight", MaxInflight: 100000},
			rcObjUDP: {MaxInflight: 100000, Retries: 1, BackupRequest: time.Millisecond, BackupBudget: 1, Idempotent: []string{rcFnIdem}},
		}
	}
	pass := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		return next(ctx, info)
	}
	newComm := func(icpt bool) *communicator.Communicator {
		cfg := conf.Default()
		edit(&cfg)
		opts := []communicator.Option{communicator.WithLogger(zap.NewNop()), communicator.WithNaming(src)}
		if icpt {
			opts = append(opts, communicator.WithInterceptor(pass))
		}
		c, err := communicator.New(cfg, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = closeComm(t, c) })
		return c
	}
	comms := []*communicator.Communicator{newComm(false), newComm(true)}
	var sps []*servantproxy.ServantProxy
	for _, c := range comms {
		for _, obj := range []string{rcObjConns, rcObjShort, rcObjUDP} {
			sp, err := c.Proxy(obj)
			if err != nil {
				t.Fatal(err)
			}
			sps = append(sps, sp)
		}
	}

	stopChurn := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() { // endpoint lists
		rng := rand.New(rand.NewPCG(1, 2))
		time.Sleep(20 * time.Millisecond)
		for {
			select {
			case <-stopChurn:
				return
			case <-time.After(time.Duration(1+rng.IntN(6)) * time.Millisecond):
			}
			src.set(rcObjConns, rcSubset(rng, tcpEPs))
			src.set(rcObjShort, rcSubset(rng, tcpEPs))
			src.set(rcObjUDP, rcSubset(rng, udpEPs))
		}
	})
	for i, s := range append(append([]*rcServer(nil), tcps...), udps...) {
		churn.Go(func() { // a server stopped (mid-request) and started again
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			for {
				select {
				case <-stopChurn:
					return
				case <-time.After(time.Duration(40+rng.IntN(120)) * time.Millisecond):
				}
				s.stop(time.Duration(rng.IntN(3)) * time.Millisecond)
				time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
				s.restart()
			}
		})
	}

	var once sync.Once
	return &rcWorld{comms: comms, sps: sps, stopChurn: func() { once.Do(func() { close(stopChurn); churn.Wait() }) }}
}

func TestChurnLifeOfACall(t *testing.T) {
	w := rcSetup(t)
	comms, sps := w.comms, w.sps
	l := &rcLedger{}
	stop := make(chan struct{})
	var callers, outstanding sync.WaitGroup
	for i := range 24 {
		callers.Go(func() { rcCaller(l, sps, uint64(i)+100, stop, &outstanding) })
	}
	time.Sleep(1500 * time.Millisecond)

	// Close the Communicators mid-traffic.
	closed := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, c := range comms {
			wg.Go(func() { _ = c.Close() })
		}
		wg.Wait()
		l.closed.Store(true)
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("Communicator.Close did not return within 10s mid-traffic; goroutines:\n%s", allStacks())
	}
	time.Sleep(10 * time.Millisecond)
	close(stop)
	done := make(chan struct{})
	go func() { callers.Wait(); outstanding.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("callers or callbacks still pending 10s after Close; goroutines:\n%s", allStacks())
	}
	w.stopChurn()

	l.mu.Lock()
	recs := l.recs
	l.mu.Unlock()
	var multi, none, late int
	var exMulti, exNone, exLate string
	for _, r := range recs {
		switch n := r.ends.Load(); {
		case n > 1:
			multi++
			exMulti = fmt.Sprintf("%s #%d ended %d times", r.what, r.id, n)
		case n == 0:
			none++
			exNone = fmt.Sprintf("%s #%d never ended", r.what, r.id)
		}
		if r.afterEnd.Load() && r.accepted.Load() {
			late++
			exLate = fmt.Sprintf("%s #%d called back after Close returned, with %s", r.what, r.id, *r.lateErr.Load())
		}
	}
	var classes []string
	l.classes.Range(func(k, v any) bool {
		classes = append(classes, fmt.Sprintf("%s=%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	t.Logf("%d calls; outcomes: %s", len(recs), strings.Join(classes, " "))
	if n := l.wrong.Load(); n > 0 {
		t.Errorf("%d calls got a reply that is not theirs, e.g. %s", n, *l.wrongEx.Load())
	}
	if multi > 0 {
		t.Errorf("%d calls ended more than once (want exactly once), e.g. %s", multi, exMulti)
	}
	if none > 0 {
		t.Errorf("%d calls never ended (want exactly once), e.g. %s", none, exNone)
	}
	if late > 0 {
		t.Errorf("%d accepted async calls were called back after Close returned (want none), e.g. %s", late, exLate)
	}
	l.classes.Range(func(k, v any) bool {
		if strings.HasPrefix(k.(string), "OTHER") {
			t.Errorf("a call failed with an error of no documented class: %s (%d times)", k, v.(*atomic.Int64).Load())
		}
		return true
	})
	for _, sp := range sps {
		if n := sp.Inflight(); n != 0 {
			t.Errorf("%s: Inflight() = %d after every call ended, want 0", sp.Name(), n)
		}
	}
}
