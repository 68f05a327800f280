package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// Timing of the fault tests. The machine running them may be a noisy 2-core box under -race, so
// every bound has generous slack on top of what the engine promises.
const (
	tick  = 10 * time.Millisecond  // cfg.TimeoutCheckInterval in the fault tests
	slack = 250 * time.Millisecond // scheduling slack on top of deadline + tick (2 busy cores, -race)
)

// fgreeter is a greeter for fault tests: it counts SayHello executions and tars_ping requests
// (of this process's clients: ownCaller), and can be told to answer late or with an error.
type fgreeter struct {
	*greeter
	calls    atomic.Int64 // SayHello executions (one-way included)
	oneways  atomic.Int64 // one-way SayHello executions
	pings    atomic.Int64 // tars_ping requests served
	delay    atomic.Int64 // nanoseconds SayHello waits before answering
	seqDelay atomic.Bool  // SayHello waits (seq % 8) * 2ms more
	failCode atomic.Int32 // when not 0, SayHello answers with this TARS return code
}

// startFGreeter starts an fgreeter on loopback; t.Cleanup stops it (releasing waiting handlers).
func startFGreeter(t *testing.T, id string) *fgreeter {
	t.Helper()
	endToEnd(t)
	g := &fgreeter{greeter: &greeter{id: id, release: make(chan struct{})}}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)),
		server.WithNumEventLoop(1), server.WithWorkers(128), server.WithQueueCap(1<<16))
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if ownCaller(cur) {
			g.calls.Add(1)
			if cur.PacketType == codec.PacketOneway {
				g.oneways.Add(1)
			}
		}
		d := time.Duration(g.delay.Load())
		if g.seqDelay.Load() {
			d += time.Duration(req.GetSeq()%8) * 2 * time.Millisecond
		}
		if d > 0 {
			tm := time.NewTimer(d)
			stop, release := stopped(ctx, false)
			select {
			case <-tm.C:
				release()
			case <-g.release:
				tm.Stop()
				release()
			case <-stop:
				tm.Stop()
				return nil, ctx.Err()
			}
		}
		if code := g.failCode.Load(); code != 0 {
			return nil, &server.Error{Code: code, Desc: "injected by the test"}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Handle(servant, codec.FuncPing, func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		if ownCaller(cur) {
			g.pings.Add(1)
		}
		return rsp, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start server %s: %v", id, err)
	}
	g.srv, g.addr = s, a.String()
	t.Cleanup(func() { g.stop(t) })
	return g
}

// faultEP is one endpoint of a fault test: an fgreeter behind its own fault proxy. The client is
// pointed at the proxy.
type faultEP struct {
	g *fgreeter
	p *faultproxy.Proxy
}

// startFaultEP starts an fgreeter and a proxy in front of it; t.Cleanup closes both.
func startFaultEP(t *testing.T, id string) *faultEP {
	t.Helper()
	g := startFGreeter(t, id)
	return &faultEP{g: g, p: startProxy(t, g.addr)}
}

// startProxy starts a fault proxy to upstream; t.Cleanup closes it.
func startProxy(t *testing.T, upstream string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// endpoint returns the proxy's address as a TARS endpoint string.
func (e *faultEP) endpoint() string { return tcpEndpoint(e.p.Addr()) }

// tcpEndpoint turns host:port into a TARS endpoint string.
func tcpEndpoint(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("tcp -h %s -p %s", host, port)
}

// proxyToAddrs binds a ServantProxy of the test servant to the endpoints (TARS endpoint strings).
func proxyToAddrs(t *testing.T, c *communicator.Communicator, endpoints ...string) *servantproxy.ServantProxy {
	t.Helper()
	var sp servantproxy.ServantProxy
	if err := c.StringToProxy(servant+"@"+strings.Join(endpoints, ":"), &sp); err != nil {
		t.Fatal(err)
	}
	return &sp
}

// proxyToEPs binds a ServantProxy of the test servant to the fault endpoints.
func proxyToEPs(t *testing.T, c *communicator.Communicator, eps ...*faultEP) *servantproxy.ServantProxy {
	t.Helper()
	s := make([]string, len(eps))
	for i, e := range eps {
		s[i] = e.endpoint()
	}
	return proxyToAddrs(t, c, s...)
}

// faultConf is the base configuration of the fault tests: one net thread (health state is per
// thread, so one thread makes it deterministic) and a 10ms timeout check interval.
func faultConf(edit func(*conf.Config)) func(*conf.Config) {
	return func(c *conf.Config) {
		c.NetThread = 1
		c.TimeoutCheckInterval = tick
		if edit != nil {
			edit(c)
		}
	}
}

// startStalled returns an address whose connects hang; t.Cleanup releases it.
func startStalled(t *testing.T) *faultproxy.Stalled {
	t.Helper()
	s, err := faultproxy.ListenStalled()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// asyncHello makes one async SayHello call and returns a channel that receives the callback's
// error once; a second run of the callback is reported on t.
func asyncHello(t *testing.T, ctx context.Context, sp *servantproxy.ServantProxy, name string, seq uint64, opts ...servantproxy.CallOption) (<-chan error, error) {
	rsp := new(hellopb.HelloReply)
	done := make(chan error, 1)
	var runs atomic.Int32
	err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp, func(err error) {
		if runs.Add(1) > 1 {
			t.Errorf("async call %s/%d: callback ran %d times (err %v)", name, seq, runs.Load(), err)
			return
		}
		if err == nil {
			_, err = checkReply(rsp, name, seq)
		}
		done <- err
	}, opts...)
	return done, err
}

// onewayHello makes one one-way SayHello call.
func onewayHello(ctx context.Context, sp *servantproxy.ServantProxy, name string, seq uint64, opts ...servantproxy.CallOption) error {
	return sp.InvokeOneway(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, opts...)
}

// callKind is one of the three ways to call.
type callKind string

const (
	syncCall   callKind = "sync"
	asyncCall  callKind = "async"
	onewayCall callKind = "oneway"
)

// callOnce makes one call of kind and returns its error when it has ended, or an error saying it
// did not end within limit.
func callOnce(t *testing.T, ctx context.Context, kind callKind, sp *servantproxy.ServantProxy, seq uint64, limit time.Duration, opts ...servantproxy.CallOption) error {
	t.Helper()
	switch kind {
	case syncCall, onewayCall:
		errc := make(chan error, 1)
		go func() {
			if kind == syncCall {
				_, err := sayHello(ctx, sp, string(kind), seq, opts...)
				errc <- err
			} else {
				errc <- onewayHello(ctx, sp, string(kind), seq, opts...)
			}
		}()
		return waitErr(errc, limit, fmt.Sprintf("%s call %d", kind, seq))
	case asyncCall:
		done, err := asyncHello(t, ctx, sp, string(kind), seq, opts...)
		if err != nil {
			return fmt.Errorf("AsyncInvoke refused: %w", err)
		}
		return waitErr(done, limit, fmt.Sprintf("callback of async call %d", seq))
	}
	t.Fatalf("unknown call kind %q", kind)
	return nil
}

// errHang is what waitErr returns when a call did not end in time.
var errHang = errors.New("the call did not end in time")

func waitErr(errc <-chan error, limit time.Duration, what string) error {
	tm := time.NewTimer(limit)
	defer tm.Stop()
	select {
	case err := <-errc:
		return err
	case <-tm.C:
		return fmt.Errorf("%s: %w (waited %v)", what, errHang, limit)
	}
}

// checkTook checks how long something that ends at a deadline took. Ending before lo is wrong
// whatever the load: t fails. hi is a timing target: a figure (see timingFigure). Past hi + live
// it was not ended by its deadline at all: t fails.
func checkTook(t *testing.T, what string, took, lo, hi time.Duration) {
	t.Helper()
	if took < lo || took > hi+live {
		t.Errorf("%s took %v, want between %v and %v (and %v at the very most)", what, took, lo, hi, hi+live)
	}
	timingFigure(t, took <= hi, took > 2*hi+500*time.Millisecond, "%s took %v (target at most %v)", what, took, hi)
}

// eventually polls cond every 5ms until it holds, or fails t after limit, or live if longer (a
// liveness bound: a test that needs cond within limit checks the returned time itself).
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	limit = max(limit, live)
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// heapInuse returns the heap in use after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rawHandler answers one decoded request by writing to w; returning false closes the connection.
type rawHandler func(req *codec.RequestPacket, w net.Conn) bool

// startRawServer starts a hand-written TARS peer for bad-input tests on loopback (a rawServer):
// it reads request frames and calls h for each, which decides what bytes to answer with.
func startRawServer(t *testing.T, h rawHandler) *rawServer {
	t.Helper()
	endToEnd(t)
	return serveRaw(t, listenLoopback(t), func(_ int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		if err := readRequests(c, 0, func(req *codec.RequestPacket) bool { return h(req, c) }); err != nil {
			t.Errorf("raw server: undecodable request: %v", err)
		}
	})
}

func (s *rawServer) endpoint() string { return tcpEndpoint(s.ln.Addr().String()) }

// replyFrame encodes a reply frame to req with the given request id and body.
func replyFrame(req *codec.RequestPacket, id int32, body []byte) []byte {
	return codec.AppendResponse(nil, &codec.ResponsePacket{
		Version:     req.Version,
		PacketType:  codec.PacketNormal,
		RequestID:   id,
		MessageType: req.MessageType,
		Ret:         codec.RetOK,
		Buffer:      body,
	})
}

// isOneOf reports whether err matches one of targets (nil matches a nil target).
func isOneOf(err error, targets ...error) bool {
	for _, target := range targets {
		if err == nil && target == nil {
			return true
		}
		if err != nil && target != nil && errors.Is(err, target) {
			return true
		}
	}
	return false
}

// loadResult is what a background load saw: replies by endpoint id, errors by class.
type loadResult struct {
	from map[string]int
	errs map[string]int
}

// startLoad makes sync SayHello calls from callers goroutines until the returned stop is called;
// stop waits for them and returns what they saw.
func startLoad(t *testing.T, sp *servantproxy.ServantProxy, callers int, opts ...servantproxy.CallOption) (stop func() loadResult) {
	t.Helper()
	return startLoadWith(t, sp, callers, nil, opts...)
}

// startLoadWith is startLoad, each failure also given to onErr (when set) on its caller's
// goroutine.
func startLoadWith(t *testing.T, sp *servantproxy.ServantProxy, callers int, onErr func(error), opts ...servantproxy.CallOption) (stop func() loadResult) {
	t.Helper()
	ctx := testCtx(t)
	var (
		mu   sync.Mutex
		res  = loadResult{from: map[string]int{}, errs: map[string]int{}}
		wg   sync.WaitGroup
		done = make(chan struct{})
		seq  atomic.Uint64
	)
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				from, err := sayHello(ctx, sp, "load", seq.Add(1), opts...)
				if err != nil && onErr != nil {
					onErr(err)
				}
				mu.Lock()
				if err == nil {
					res.from[from]++
				} else {
					c := classify(err)
					if c == "" {
						c = err.Error()
					}
					res.errs[c]++
				}
				mu.Unlock()
			}
		})
	}
	return func() loadResult {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return res
	}
}

// withTimeout is the call options of a call with timeout d.
func withTimeout(d time.Duration) []servantproxy.CallOption {
	return []servantproxy.CallOption{servantproxy.WithTimeout(d)}
}
