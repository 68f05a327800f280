package communicator_test

// The second balancing layer under churn: endpoints that flap (stopped and restarted
// on the same port, answering slowly or with errors for a while), each balancer's shares, hashed
// calls across outages and list updates, the circuit breaker with several net threads and
// connections, and retries. Real servers (the project's) on 127.0.0.x ports the tests open, a
// real Communicator; the package's TestMain checks for leaked goroutines.

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// lbSrv is a test server that can be stopped and started again on the same address, and told
// to answer late or with an error code. Its id (in every reply) stays across restarts.
type lbSrv struct {
	id       string
	addr     string // host:port, fixed by the first start
	weight   string // " -w N -v 1" etc. appended to the endpoint string
	calls    atomic.Int64
	delay    atomic.Int64  // nanoseconds SayHello waits before answering
	failCode atomic.Int32  // when not 0, SayHello answers with this code
	hold     chan struct{} // if set, a SayHello named "hold" waits for it to close
	holding  atomic.Int32  // "hold" calls waiting

	mu   sync.Mutex
	srv  *server.Server
	quit chan struct{} // closed when this incarnation stops: releases waiting handlers
}

// startLB starts an lbSrv on host (a 127.0.0.0/8 address); t.Cleanup stops it.
func startLB(t *testing.T, id, host string) *lbSrv {
	t.Helper()
	endToEnd(t)
	s := &lbSrv{id: id, addr: net.JoinHostPort(host, "0")}
	s.start(t)
	t.Cleanup(func() { s.stop(t) })
	return s
}

// start starts the server (again) on s.addr.
func (s *lbSrv) start(t *testing.T) {
	t.Helper()
	quit := make(chan struct{})
	srv := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+s.id)),
		server.WithNumEventLoop(1), server.WithWorkers(128), server.WithQueueCap(1<<16))
	err := server.HandleProto(srv, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if ownCaller(cur) {
			s.calls.Add(1)
		}
		if req.GetName() == "hold" && s.hold != nil {
			s.holding.Add(1)
			<-s.hold
		}
		if d := time.Duration(s.delay.Load()); d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-tm.C:
			case <-quit:
				tm.Stop()
			}
		}
		if code := s.failCode.Load(); code != 0 {
			return nil, &server.Error{Code: code, Desc: "injected by the test"}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + s.id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var a net.Addr
	for deadline := time.Now().Add(live); ; time.Sleep(20 * time.Millisecond) {
		if a, err = srv.Start(s.addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("start server %s on %s: %v", s.id, s.addr, err)
		}
	}
	s.mu.Lock()
	s.srv, s.quit, s.addr = srv, quit, a.String()
	s.mu.Unlock()
}

// stop stops the running incarnation gracefully (no-op if none runs).
func (s *lbSrv) stop(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	srv, quit := s.srv, s.quit
	s.srv, s.quit = nil, nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	close(quit)
	if err := stopServer(t, "server "+s.id, srv); err != nil {
		t.Logf("stop server %s: %v", s.id, err)
	}
}

// kill stops the running incarnation at once, closing its connections (a crash to the client).
func (s *lbSrv) kill(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	srv, quit := s.srv, s.quit
	s.srv, s.quit = nil, nil
	s.mu.Unlock()
	defer close(quit) // after the engine closed the connections: handlers held answer nobody
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_ = srv.Stop(ctx)
	for deadline := time.Now().Add(live); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		_ = c.Close()
	}
	t.Fatalf("server %s still accepts connections after kill", s.id)
}

func (s *lbSrv) endpoint() string { return tcpEndpoint(s.addr) + s.weight }

func (s *lbSrv) parsed(t *testing.T) endpoint.Endpoint {
	t.Helper()
	e, err := endpoint.ParseEndpoint(s.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// lbComm starts a Communicator whose servant uses sv, with the base config edited by edit.
func lbComm(t *testing.T, sv conf.Servant, edit func(*conf.Config), opts ...communicator.Option) *communicator.Communicator {
	t.Helper()
	return newCommWith(t, func(c *conf.Config) {
		c.TimeoutCheckInterval = tick
		c.Servants = map[string]conf.Servant{servant: sv}
		if edit != nil {
			edit(c)
		}
	}, opts...)
}

func lbProxy(t *testing.T, c *communicator.Communicator, ss ...*lbSrv) *servantproxy.ServantProxy {
	t.Helper()
	eps := make([]string, len(ss))
	for i, s := range ss {
		eps[i] = s.endpoint()
	}
	return proxyToAddrs(t, c, eps...)
}

// tally is what a run of calls saw: replies by server id, errors by class.
type tally struct {
	from map[string]int
	errs map[string]int
}

func (r tally) String() string { return fmt.Sprintf("replies %v, errors %v", r.from, r.errs) }

func (r tally) total() int {
	n := 0
	for _, k := range r.from {
		n += k
	}
	return n
}

// seqCalls makes n sequential calls and tallies them.
func seqCalls(t *testing.T, sp *servantproxy.ServantProxy, n int, opts ...servantproxy.CallOption) tally {
	t.Helper()
	ctx := testCtx(t)
	r := tally{from: map[string]int{}, errs: map[string]int{}}
	for i := range n {
		from, err := sayHello(ctx, sp, "seq", uint64(i), opts...)
		if err != nil {
			c := classify(err)
			if c == "" {
				c = err.Error()
			}
			r.errs[c]++
			continue
		}
		r.from[from]++
	}
	return r
}

// TestBalanceSlowEndpointAnsweringPingsStaysOut: one of three endpoints keeps answering tars_ping
// at once but every SayHello only after 1s, past the calls' 100ms timeout (a handler stuck on a
// dependency; its server is up). The health rules take it out at its first timeout
// (frequent-fail-invoke = 1, the default); the README says that once out it gets no user call
// but one per try-interval (5s here), the client's own pings aside. So over a window of a second
// and a half, after the rule has tripped, at most a handful of calls may reach it (those already
// on their way, one per try-interval). The window starts 2.5s after the trip, past the 2s during
// which the client probes every 250ms: by then its probes have backed off too.
func TestBalanceSlowEndpointAnsweringPingsStaysOut(t *testing.T) {
	a, b, c := startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.1"), startLB(t, "c", "127.0.0.1")
	comm := lbComm(t, conf.Servant{}, func(c *conf.Config) { c.NetThread = 1 })
	sp := lbProxy(t, comm, a, b, c)
	if r := seqCalls(t, sp, 6); len(r.errs) > 0 {
		t.Fatalf("warm-up: %v", r)
	}
	b.delay.Store(int64(time.Second))
	opt := servantproxy.WithTimeout(100 * time.Millisecond)
	stop := startLoad(t, sp, 8, opt)
	waitFor(t, "a call to b times out", func() bool { return b.calls.Load() > 2 })
	time.Sleep(2500 * time.Millisecond) // the rule has tripped; probes are past their 2s grace
	b0, h0 := b.calls.Load(), a.calls.Load()+c.calls.Load()
	time.Sleep(1500 * time.Millisecond)
	got := stop()
	toB, healthy := b.calls.Load()-b0, a.calls.Load()+c.calls.Load()-h0
	t.Logf("in 1.5s from 2.5s after the rule tripped: %d calls reached b (answering pings, SayHello in 1s), %d a and c; %v %v", toB, healthy, got.from, got.errs)
	if toB > 8+1 {
		t.Errorf("an endpoint whose calls all time out got %d calls in 1.5s after the health rules took it out (a and c answered %d; callers saw %d timeouts); "+
			"want at most the 8 callers' calls under way plus one per try-interval (5s)", toB, healthy, got.errs["timeout"])
	}
}

// eventLog is a timeline of what a test did and the first errors its callers saw.
type eventLog struct {
	mu    sync.Mutex
	start time.Time
	lines []string
	errs  int
}

func newEventLog() *eventLog { return &eventLog{start: time.Now()} }

func (l *eventLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%8.3fs %s", time.Since(l.start).Seconds(), s))
}

func (l *eventLog) addErr(err error) {
	l.mu.Lock()
	l.errs++
	n := l.errs
	l.mu.Unlock()
	if n <= 10 {
		l.add("call failed: " + err.Error())
	}
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startLoggedLoad is startLoad, each caller's failure also logged (the first ten) in ev.
func startLoggedLoad(t *testing.T, sp *servantproxy.ServantProxy, callers int, ev *eventLog, opts ...servantproxy.CallOption) (stop func() loadResult) {
	t.Helper()
	return startLoadWith(t, sp, callers, ev.addErr, opts...)
}

// waitShares waits (live) for a window in which the servers together answer at least 240 calls
// and each answers at least a sixth of them (a third is its due); it fails t with the last
// window's counts otherwise.
func waitShares(t *testing.T, what string, ss ...*lbSrv) {
	t.Helper()
	counts := func() []int64 {
		out := make([]int64, len(ss))
		for i, s := range ss {
			out[i] = s.calls.Load()
		}
		return out
	}
	var last []int64
	start := time.Now()
	for time.Since(start) < live {
		c0 := counts()
		var d []int64
		for w0 := time.Now(); time.Since(w0) < 2*time.Second; time.Sleep(5 * time.Millisecond) {
			d = counts()
			var sum int64
			for i := range d {
				d[i] -= c0[i]
				sum += d[i]
			}
			if sum >= 240 {
				break
			}
		}
		last = d
		var sum int64
		for _, k := range d {
			sum += k
		}
		ok := sum >= 240
		for _, k := range d {
			ok = ok && k*6 >= sum
		}
		if ok {
			return
		}
	}
	t.Fatalf("%s: in no window within %v did every endpoint answer its share; last window %v (servers %v)", what, live, last, ids(ss))
}

func ids(ss []*lbSrv) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.id
	}
	return out
}

// TestBalanceFlapReturnsToRotation: with every balancer (hash balancers spread calls without a
// hash code round robin), two net threads and eight callers, one of three endpoints flaps twice:
// its server stops (gracefully, or crashes) and starts again on the same port half a second
// later. While it is down the others take the calls; once it is back it gets calls again
// within the liveness bound and then its share, and the others keep theirs (no endpoint left
// out, none taking everything). A graceful stop fails no call (README: "stopping one server of
// several fails no call"); a crash fails only calls with a connection error (those on the
// connections it cut, and the first dial per net thread), a few per flap.
func TestBalanceFlapReturnsToRotation(t *testing.T) {
	type mode struct {
		lb  string
		how string
	}
	var modes []mode
	for _, lb := range []string{"roundrobin", "weighted", "random", "least-inflight", "p2c", "hash", "consistenthash"} {
		modes = append(modes, mode{lb, "stop"})
	}
	for _, lb := range []string{"roundrobin", "least-inflight", "p2c"} {
		modes = append(modes, mode{lb, "kill"})
	}
	for _, m := range modes {
		t.Run(m.lb+"/"+m.how, func(t *testing.T) {
			ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.2"), startLB(t, "c", "127.0.0.3")}
			comm := lbComm(t, conf.Servant{LoadBalance: m.lb}, func(c *conf.Config) {
				c.NetThread = 2
				livenessTimeouts(c)
			})
			sp := lbProxy(t, comm, ss...)
			a, b, c := ss[0], ss[1], ss[2]
			ev := newEventLog()
			stop := startLoggedLoad(t, sp, 8, ev)
			stopped := false
			defer func() {
				if !stopped {
					stop()
				}
			}()
			waitShares(t, "before any flap", ss...)
			for flap := range 2 {
				ev.add(fmt.Sprintf("flap %d: %s b", flap, m.how))
				if m.how == "stop" {
					b.stop(t)
				} else {
					b.kill(t)
				}
				ev.add(fmt.Sprintf("flap %d: b %s returned", flap, m.how))
				h0 := a.calls.Load() + c.calls.Load()
				waitFor(t, fmt.Sprintf("flap %d: a and c answer 200 calls while b is down", flap), func() bool { return a.calls.Load()+c.calls.Load()-h0 >= 200 })
				time.Sleep(300 * time.Millisecond)
				b0 := b.calls.Load()
				b.start(t)
				ev.add(fmt.Sprintf("flap %d: b restarted", flap))
				back := waitFor(t, fmt.Sprintf("flap %d: b gets calls again after its restart", flap), func() bool { return b.calls.Load() > b0 })
				t.Logf("flap %d: b back %v after its restart", flap, back)
				waitShares(t, fmt.Sprintf("flap %d: after b's restart", flap), ss...)
			}
			got := stop()
			stopped = true
			t.Logf("%v", got)
			switch m.how {
			case "stop":
				if len(got.errs) > 0 {
					t.Errorf("calls failed while one of three servers stopped gracefully and started again: %v\n%s", got.errs, ev)
				}
			case "kill":
				bad := maps.Clone(got.errs)
				delete(bad, "connection")
				if len(bad) > 0 || got.errs["connection"] > 2*16 {
					t.Errorf("while one of three servers crashed twice: errors %v, want only connection errors, at most 16 a crash", got.errs)
				}
			}
		})
	}
}

// codeMap calls once with each code and returns the server that answered each (""
// for a failed call, its error class in errs).
func codeMap(t *testing.T, sp *servantproxy.ServantProxy, codes []uint64) (m map[uint64]string, errs map[string]int) {
	t.Helper()
	ctx := testCtx(t)
	m, errs = map[uint64]string{}, map[string]int{}
	for i, code := range codes {
		from, err := sayHello(ctx, sp, "hashed", uint64(i), servantproxy.WithHash(code))
		if err != nil {
			errs[classify(err)]++
		}
		m[code] = from
	}
	return m, errs
}

func hashCodes(n int) []uint64 {
	codes := make([]uint64, n)
	for i := range codes {
		codes[i] = uint64(i)*2654435761 + 12345
	}
	return codes
}

// TestBalanceHashedCallsAcrossFlap: hashed calls (hash and consistenthash, three servers on
// three loopback hosts, two net threads) while one server stops and starts again on its port.
// Every code whose server stays up keeps its server throughout; the stopped server's codes go to
// one other server each (the same on every call while it is down), and all come back to it once
// it has restarted. A graceful stop fails no hashed call (the refusal moves it where the code's
// fallback goes).
func TestBalanceHashedCallsAcrossFlap(t *testing.T) {
	for _, lb := range []string{"hash", "consistenthash"} {
		for _, how := range []string{"stop", "kill", "stop/conns=3,retries=1", "kill/conns=3,retries=1"} {
			t.Run(lb+"/"+how, func(t *testing.T) {
				sv := conf.Servant{LoadBalance: lb}
				if strings.HasSuffix(how, "retries=1") {
					sv.Connections, sv.Retries = 3, 1
				}
				how, _, _ := strings.Cut(how, "/")
				ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.2"), startLB(t, "c", "127.0.0.3")}
				comm := lbComm(t, sv, func(c *conf.Config) {
					c.NetThread = 2
					livenessTimeouts(c)
				})
				sp := lbProxy(t, comm, ss...)
				b := ss[1]
				codes := hashCodes(300)
				orig, errs := codeMap(t, sp, codes)
				if len(errs) > 0 {
					t.Fatalf("steady state: %v", errs)
				}
				per := map[string]int{}
				for _, s := range orig {
					per[s]++
				}
				t.Logf("codes per server: %v", per)
				if again, _ := codeMap(t, sp, codes); !maps.Equal(orig, again) {
					t.Fatalf("steady state: codes moved between two rounds")
				}
				if how == "stop" {
					b.stop(t)
				} else {
					b.kill(t)
				}
				var first map[uint64]string
				for round := range 3 {
					m, errs := codeMap(t, sp, codes)
					if how == "stop" && len(errs) > 0 || len(errs) > 0 && (round > 0 || len(errs) > 4 || errs["connection"] != sum(errs)) {
						t.Fatalf("%s b, round %d: failed calls %v", how, round, errs)
					}
					for _, code := range codes {
						switch {
						case m[code] == "":
						case orig[code] != "b" && m[code] != orig[code]:
							t.Fatalf("round %d with b down: code %d moved from %s (up) to %s", round, code, orig[code], m[code])
						case orig[code] == "b" && m[code] == "b":
							t.Fatalf("round %d with b down: code %d answered by b", round, code)
						case round == 2 && orig[code] == "b" && m[code] != first[code]:
							t.Fatalf("b down: code %d went to %s, then to %s", code, first[code], m[code])
						}
					}
					if round == 1 {
						first = m
					}
				}
				b.start(t)
				var last map[uint64]string
				waitFor(t, "every code back on its server after b's restart", func() bool {
					last, _ = codeMap(t, sp, codes)
					return maps.Equal(orig, last)
				})
			})
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, k := range m {
		n += k
	}
	return n
}

// TestBalanceHashedCallsAcrossUpdates: list updates from a naming source (one net thread).
// consistenthash: a host that joins takes codes only for itself (every other code keeps its
// server), and one that leaves gives up only its own codes. hash (TarsCpp's mod hash over every
// registered endpoint): an endpoint the registry lists as inactive keeps the others' indices, so
// every code of the active ones keeps its server, and its own codes come back when it is
// active again.
func TestBalanceHashedCallsAcrossUpdates(t *testing.T) {
	codes := hashCodes(300)
	t.Run("consistenthash", func(t *testing.T) {
		ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.2"), startLB(t, "c", "127.0.0.3"), startLB(t, "d", "127.0.0.4")}
		a, b, c, d := ss[0], ss[1], ss[2], ss[3]
		src := &listSource{}
		src.Set(naming.List{Active: []endpoint.Endpoint{a.parsed(t), b.parsed(t), c.parsed(t)}})
		comm := lbComm(t, conf.Servant{LoadBalance: "consistenthash"}, func(c *conf.Config) { c.NetThread = 1 }, communicator.WithNaming(src))
		sp, err := comm.Proxy(servant)
		if err != nil {
			t.Fatal(err)
		}
		orig, errs := codeMap(t, sp, codes)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		src.Set(naming.List{Active: []endpoint.Endpoint{a.parsed(t), b.parsed(t), c.parsed(t), d.parsed(t)}})
		var m map[uint64]string
		waitFor(t, "codes reach d after it joined", func() bool {
			m, _ = codeMap(t, sp, codes)
			return slices.Contains(slices.Collect(maps.Values(m)), "d")
		})
		moved := 0
		for _, code := range codes {
			if m[code] != orig[code] {
				moved++
				if m[code] != "d" {
					t.Errorf("d joined: code %d moved from %s to %s", code, orig[code], m[code])
				}
			}
		}
		t.Logf("d joined: %d of %d codes moved to it", moved, len(codes))
		withD := m
		src.Set(naming.List{Active: []endpoint.Endpoint{a.parsed(t), b.parsed(t), d.parsed(t)}})
		waitFor(t, "no code reaches c after it left", func() bool {
			m, _ = codeMap(t, sp, codes)
			return !slices.Contains(slices.Collect(maps.Values(m)), "c")
		})
		for _, code := range codes {
			if withD[code] != "c" && m[code] != withD[code] {
				t.Errorf("c left: code %d moved from %s to %s", code, withD[code], m[code])
			}
		}
	})
	t.Run("hash", func(t *testing.T) {
		ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.1"), startLB(t, "c", "127.0.0.1"), startLB(t, "d", "127.0.0.1")}
		all := []endpoint.Endpoint{ss[0].parsed(t), ss[1].parsed(t), ss[2].parsed(t), ss[3].parsed(t)}
		src := &listSource{}
		src.Set(naming.List{Active: all})
		comm := lbComm(t, conf.Servant{LoadBalance: "hash"}, func(c *conf.Config) { c.NetThread = 1 }, communicator.WithNaming(src))
		sp, err := comm.Proxy(servant)
		if err != nil {
			t.Fatal(err)
		}
		orig, errs := codeMap(t, sp, codes)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		src.Set(naming.List{Active: all[:3], Inactive: all[3:]})
		var m map[uint64]string
		waitFor(t, "no code reaches d once it is inactive", func() bool {
			m, _ = codeMap(t, sp, codes)
			return !slices.Contains(slices.Collect(maps.Values(m)), "d")
		})
		for _, code := range codes {
			if orig[code] != "d" && m[code] != orig[code] {
				t.Errorf("d inactive: code %d moved from %s to %s", code, orig[code], m[code])
			}
		}
		src.Set(naming.List{Active: all})
		waitFor(t, "every code back on its server once d is active again", func() bool {
			m, _ = codeMap(t, sp, codes)
			return maps.Equal(orig, m)
		})
	})
}

// TestBalanceBreakerFlap: circuit-breaker = true, two net threads, connections = 2 (four
// breakers per endpoint). One of three endpoints answers every call with -1 (a framework error)
// for a while: its breakers trip and it is isolated (only probe calls reach it, a handful per
// isolation per breaker, while the others take the load); then it answers well again: a probe
// closes each breaker and it gets its share again within the liveness bound. The callers saw
// only -1 errors, and Stats counts exactly what they saw, per endpoint.
func TestBalanceBreakerFlap(t *testing.T) {
	ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.1"), startLB(t, "c", "127.0.0.1")}
	a, b, c := ss[0], ss[1], ss[2]
	comm := lbComm(t, conf.Servant{CircuitBreaker: true, Connections: 2}, func(c *conf.Config) {
		c.NetThread = 2
		livenessTimeouts(c)
	})
	sp := lbProxy(t, comm, ss...)
	stop := startLoad(t, sp, 8)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitShares(t, "before b fails", ss...)
	b.failCode.Store(-1)
	b0 := b.calls.Load()
	waitFor(t, "b answers -1 to calls", func() bool { return b.calls.Load()-b0 >= 20 })
	time.Sleep(500 * time.Millisecond) // every breaker of b has tripped
	b1, h1 := b.calls.Load(), a.calls.Load()+c.calls.Load()
	waitFor(t, "a and c answer 3000 calls", func() bool { return a.calls.Load()+c.calls.Load()-h1 >= 3000 })
	toB, healthy := b.calls.Load()-b1, a.calls.Load()+c.calls.Load()-h1
	t.Logf("b failing, isolated: %d calls reached it while a and c answered %d", toB, healthy)
	if toB*20 > healthy {
		t.Errorf("b answers every call with -1 and the breaker is on, yet it got %d calls while a and c answered %d: not isolated", toB, healthy)
	}
	b.failCode.Store(0)
	waitShares(t, "after b recovered", ss...)
	got := stop()
	stopped = true
	bad := maps.Clone(got.errs)
	delete(bad, "server--1")
	if len(bad) > 0 {
		t.Errorf("errors other than b's -1: %v", got.errs)
	}
	rows := attribRows(comm.Stats(), "SayHello")
	t.Logf("callers: %v; stats: %s", got, attribRowsString(rows))
	for _, s := range ss {
		r := rows[s.addr]
		if int(r["ok"]) != got.from[s.id] {
			t.Errorf("stats count %d ok calls for %s (%s), its callers got %d replies", r["ok"], s.id, s.addr, got.from[s.id])
		}
	}
	if n := int(rows[b.addr]["server_error"]); n != got.errs["server--1"] {
		t.Errorf("stats count %d server errors for b, callers saw %d", n, got.errs["server--1"])
	}
	if total := attribTotal(comm.Stats(), "SayHello"); int(total) != sum(got.from)+sum(got.errs) {
		t.Errorf("stats count %d calls, callers made %d", total, sum(got.from)+sum(got.errs))
	}
}

// TestBalanceRetriesAcrossCrash: retries = 1, two net threads, connections = 2, eight callers;
// one of three servers crashes and comes back on its port, twice. The calls written to it when
// it crashed fail with a connection error (never retried: the server may have run them); a call
// that finds it gone before writing (a refused dial) is retried on another endpoint and
// succeeds. Every reply is the callers', each call ran at most once, and Stats counts what the
// callers saw, per endpoint and result.
func TestBalanceRetriesAcrossCrash(t *testing.T) {
	ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.1"), startLB(t, "c", "127.0.0.1")}
	a, b, c := ss[0], ss[1], ss[2]
	comm := lbComm(t, conf.Servant{Retries: 1, Connections: 2}, func(c *conf.Config) {
		c.NetThread = 2
		livenessTimeouts(c)
	})
	sp := lbProxy(t, comm, ss...)
	stop := startLoad(t, sp, 8)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitShares(t, "before the crash", ss...)
	for flap := range 2 {
		b.delay.Store(int64(time.Second)) // calls in flight on b when it dies
		b0 := b.calls.Load()
		waitFor(t, "calls wait on b", func() bool { return b.calls.Load()-b0 >= 2 })
		b.kill(t)
		b.delay.Store(0)
		h0 := a.calls.Load() + c.calls.Load()
		waitFor(t, "a and c answer 300 calls", func() bool { return a.calls.Load()+c.calls.Load()-h0 >= 300 })
		b.start(t)
		waitShares(t, fmt.Sprintf("flap %d: after b's restart", flap), ss...)
	}
	got := stop()
	stopped = true
	bad := maps.Clone(got.errs)
	delete(bad, "connection")
	if len(bad) > 0 || got.errs["connection"] > 2*16 {
		t.Errorf("errors %v, want only the connection errors of calls written to b when it crashed (at most 16 a crash)", got.errs)
	}
	ran := a.calls.Load() + b.calls.Load() + c.calls.Load()
	if int(ran) > sum(got.from)+sum(got.errs) {
		t.Errorf("the servers ran %d calls, the callers made %d: some ran twice", ran, sum(got.from)+sum(got.errs))
	}
	rows := attribRows(comm.Stats(), "SayHello")
	t.Logf("callers: %v; stats: %s", got, attribRowsString(rows))
	conns := 0
	for _, s := range ss {
		r := rows[s.addr]
		if int(r["ok"]) != got.from[s.id] {
			t.Errorf("stats count %d ok calls for %s (%s), its callers got %d replies", r["ok"], s.id, s.addr, got.from[s.id])
		}
		conns += int(r["connection"])
	}
	if conns != got.errs["connection"] {
		t.Errorf("stats count %d connection errors, callers saw %d", conns, got.errs["connection"])
	}
	if total := attribTotal(comm.Stats(), "SayHello"); int(total) != sum(got.from)+sum(got.errs) {
		t.Errorf("stats count %d calls, callers made %d", total, sum(got.from)+sum(got.errs))
	}
}

// TestBalanceSharesAcrossUpdate: each balancer's shares of sequential calls (one caller, one net
// thread) on a list of three, and after a naming update that replaces one endpoint by a new one:
// the one that left gets no call once the update is in, the one that joined its share.
// roundrobin and least-inflight (idle endpoints in turn) give each exactly a third; weighted
// follows -w (100:50:20, then 50:20:100: weights TarsCpp's list scales exactly), as does any
// balancer when every endpoint says -v 1; random gives each at least a sixth.
func TestBalanceSharesAcrossUpdate(t *testing.T) {
	tests := []struct {
		lb      string
		weights []string // a, b, c, d
		want    func(w int) (lo, hi float64)
	}{
		{lb: "roundrobin", want: exactThird},
		{lb: "least-inflight", want: exactThird},
		{lb: "random", want: atLeastSixth},
		{lb: "p2c", want: anyShare},
		{lb: "hash", want: exactThird},
		{lb: "consistenthash", want: exactThird},
		{lb: "weighted", weights: []string{" -w 100", " -w 50", " -w 20", " -w 100"}, want: byWeight},
		{lb: "roundrobin", weights: []string{" -w 100 -v 1", " -w 50 -v 1", " -w 20 -v 1", " -w 100 -v 1"}, want: byWeight},
		{lb: "p2c", weights: []string{" -w 100 -v 1", " -w 50 -v 1", " -w 20 -v 1", " -w 100 -v 1"}, want: byWeight},
	}
	for _, tt := range tests {
		name := tt.lb
		if tt.weights != nil {
			name += "/" + strings.TrimSpace(tt.weights[0])
		}
		t.Run(name, func(t *testing.T) {
			ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.1"), startLB(t, "c", "127.0.0.1"), startLB(t, "d", "127.0.0.1")}
			w := map[string]int{}
			for i, s := range ss {
				w[s.id] = 100
				if tt.weights != nil {
					s.weight = tt.weights[i]
					var k int
					fmt.Sscanf(strings.TrimSpace(s.weight), "-w %d", &k)
					w[s.id] = k
				}
			}
			eps := func(ss ...*lbSrv) []endpoint.Endpoint {
				var out []endpoint.Endpoint
				for _, s := range ss {
					out = append(out, s.parsed(t))
				}
				return out
			}
			src := &listSource{}
			src.Set(naming.List{Active: eps(ss[0], ss[1], ss[2])})
			comm := lbComm(t, conf.Servant{LoadBalance: tt.lb}, func(c *conf.Config) { c.NetThread = 1 }, communicator.WithNaming(src))
			sp, err := comm.Proxy(servant)
			if err != nil {
				t.Fatal(err)
			}
			const n = 600
			check := func(phase string, r tally, on []*lbSrv) {
				t.Helper()
				if len(r.errs) > 0 {
					t.Fatalf("%s: %v", phase, r)
				}
				total := 0
				for _, s := range on {
					total += w[s.id]
				}
				for _, s := range ss {
					got := float64(r.from[s.id]) / float64(r.total())
					due := 0.0
					if slices.Contains(on, s) {
						due = float64(w[s.id]) / float64(total)
					}
					lo, hi := 0.0, 0.0
					if due > 0 {
						lo, hi = tt.want(0)
						lo, hi = due*lo, due*hi
					}
					if got < lo-0.02 || got > hi+0.02 {
						t.Errorf("%s: %s got %.3f of the calls, want %.3f..%.3f (%v)", phase, s.id, got, lo, hi, r)
					}
				}
			}
			check("a, b, c", seqCalls(t, sp, n), ss[:3])
			src.Set(naming.List{Active: eps(ss[1], ss[2], ss[3])})
			d0 := ss[3].calls.Load()
			waitFor(t, "d gets a call once it joined", func() bool {
				seqCalls(t, sp, 3)
				return ss[3].calls.Load() > d0
			})
			check("b, c, d", seqCalls(t, sp, n), ss[1:])
		})
	}
}

// TestBalanceWeightsOnlyUpdate: a naming update that changes only the endpoints' -w (same
// addresses) keeps their connections and changes the shares: 100:50:20, then 20:50:100.
func TestBalanceWeightsOnlyUpdate(t *testing.T) {
	ss := []*lbSrv{startLB(t, "a", "127.0.0.1"), startLB(t, "b", "127.0.0.1"), startLB(t, "c", "127.0.0.1")}
	list := func(ws ...int) naming.List {
		var l naming.List
		for i, s := range ss {
			e, err := endpoint.ParseEndpoint(fmt.Sprintf("%s -w %d -v 1", tcpEndpoint(s.addr), ws[i]))
			if err != nil {
				t.Fatal(err)
			}
			l.Active = append(l.Active, e)
		}
		return l
	}
	src := &listSource{}
	src.Set(list(100, 50, 20))
	comm := lbComm(t, conf.Servant{}, func(c *conf.Config) { c.NetThread = 1 }, communicator.WithNaming(src))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	r := seqCalls(t, sp, 680)
	if r.from["a"] != 400 || r.from["b"] != 200 || r.from["c"] != 80 {
		t.Fatalf("weights 100:50:20, 680 calls: %v, want 400:200:80", r)
	}
	src.Set(list(20, 50, 100))
	waitFor(t, "c takes the most calls after the weights changed", func() bool {
		r = seqCalls(t, sp, 68)
		return r.from["c"] > r.from["a"]
	})
	r = seqCalls(t, sp, 680)
	if r.from["a"] != 80 || r.from["b"] != 200 || r.from["c"] != 400 {
		t.Fatalf("weights 20:50:100, 680 calls: %v, want 80:200:400", r)
	}
	if e, _ := attribEndpointStats(comm.Stats(), ss[0].addr); e.Reconnects != 0 || e.ConnLosses != 0 {
		t.Errorf("a weight change reconnected a: %+v", e)
	}
}

func exactThird(int) (lo, hi float64)   { return 1, 1 }
func atLeastSixth(int) (lo, hi float64) { return 0.5, 2 }
func byWeight(int) (lo, hi float64)     { return 0.9, 1.1 }

// anyShare: p2c promises no share among equal idle endpoints (of three, the one of the highest
// peak latency loses every draw until its latency decays), only that the endpoint that left gets
// none.
func anyShare(int) (lo, hi float64) { return 0, 3 }

// TestBalanceTimeoutRatioThreadsConns: health rule 1 alone (the timeout-ratio window: at least
// 2 failures making 20% of a 200ms window's calls; the streak rule off), two net threads,
// connections = 2 (four judges of each endpoint). One of three endpoints is black-holed: each of
// its connections is taken out by its window, so that after a while only probes reach it (its
// pings and one call per try-interval each), while the others take the load; once traffic
// passes again it gets its share back.
func TestBalanceTimeoutRatioThreadsConns(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.NetThread = 2
		c.Servants = map[string]conf.Servant{servant: {Connections: 2}}
		c.Health = conf.Health{
			MinTimeoutInvoke: 2, CheckTimeoutInterval: 200 * time.Millisecond, TimeoutRatio: 0.2,
			FrequentFailInvoke: 1000000, MinFrequentFailTime: time.Hour,
			TryInterval: healthTry, MaxConnectFail: 1,
		}
	}))
	sp := proxyToEPs(t, comm, eps...)
	bad := eps[1]
	opt := servantproxy.WithTimeout(100 * time.Millisecond)
	calls := func() []int64 { return []int64{eps[0].g.calls.Load(), eps[1].g.calls.Load(), eps[2].g.calls.Load()} }
	load := startLoad(t, sp, 8, opt)
	stopped := false
	defer func() {
		if !stopped {
			load()
		}
	}()
	waitFor(t, "every endpoint answers calls", func() bool { c := calls(); return c[0] > 50 && c[1] > 50 && c[2] > 50 })
	bad.p.BlackHole(faultproxy.Both)
	time.Sleep(time.Second) // every connection's window has judged b
	healthy := func() int64 { return eps[0].g.calls.Load() + eps[2].g.calls.Load() }
	h0, dropped0, up0 := healthy(), bad.p.Stats().DroppedUp, eps[0].p.Stats().BytesUp+eps[2].p.Stats().BytesUp
	start := time.Now()
	waitFor(t, "a and c answer 6000 calls", func() bool { return healthy()-h0 >= 6000 })
	measured := time.Since(start)
	served := healthy() - h0
	reqSize := float64(eps[0].p.Stats().BytesUp+eps[2].p.Stats().BytesUp-up0) / float64(served)
	toBad := float64(bad.p.Stats().DroppedUp-dropped0) / reqSize
	maxProbes := 4*(float64(measured/(250*time.Millisecond))+float64(measured/healthTry)+2) + 8
	t.Logf("b black-holed: about %.0f requests (calls and probes) went into it in %v while a and c answered %d (at most %.0f probes allowed)", toBad, measured, served, maxProbes)
	if toBad > maxProbes {
		t.Errorf("about %.0f requests went to the black-holed endpoint in %v while the others answered %d; want at most %.0f (probes)", toBad, measured, served, maxProbes)
	}
	if err := bad.p.Pass(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b answers its share again", func() bool {
		c0 := calls()
		time.Sleep(300 * time.Millisecond)
		c1 := calls()
		d := []int64{c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]}
		return d[1]*6 >= d[0]+d[1]+d[2] && d[0]+d[1]+d[2] >= 60
	})
	got := load()
	stopped = true
	t.Logf("%v %v", got.from, got.errs)
	if n := len(got.errs) - min(got.errs["timeout"], 1); n != 0 {
		t.Errorf("errors other than timeouts: %v", got.errs)
	}
}

// TestBalanceRetriesRefusedConnsThreads: retries = 2, connections = 3, two net threads; two of
// three endpoints refuse connections. A burst of calls on a fresh Communicator (routed to every
// endpoint before any dial failed) all succeed on the one server up, each run exactly once
// there; the calls moved between connections of a refusing endpoint and then retried elsewhere
// are counted once, as the caller saw them: Stats has every call as ok under the server up and
// none under the refusing endpoints.
func TestBalanceRetriesRefusedConnsThreads(t *testing.T) {
	a := startLB(t, "a", "127.0.0.1")
	x, y := deadAddr(t), deadAddr(t)
	comm := lbComm(t, conf.Servant{Retries: 2, Connections: 3}, func(c *conf.Config) {
		c.NetThread = 2
		livenessTimeouts(c)
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(x), a.endpoint(), tcpEndpoint(y))
	const n = 60
	for round := range 3 {
		from, errs := burst(t, sp, n)
		for i, err := range errs {
			if err != nil || from[i] != "a" {
				t.Fatalf("round %d call %d: from %q, err %v; want a reply from a", round, i, from[i], err)
			}
		}
	}
	if got := a.calls.Load(); got != 3*n {
		t.Errorf("a ran %d calls, the callers made %d", got, 3*n)
	}
	rows := attribRows(comm.Stats(), "SayHello")
	t.Logf("stats: %s", attribRowsString(rows))
	if rows[a.addr]["ok"] != 3*n || len(rows) != 1 || len(rows[a.addr]) != 1 {
		t.Errorf("stats: %s; want %d ok calls under %s and nothing else", attribRowsString(rows), 3*n, a.addr)
	}
}

// TestBalanceStopNoticeNotUndoneByReply: a server stops gracefully while it runs a call of this
// client's (the Stop waits for it). Its notice takes the endpoint out of rotation (Stats shows
// it inactive); then the call it was running is answered and the Stop ends, closing the
// connection. The README: "On the notice or a refusal the client takes the endpoint out of
// rotation ... until a probe finds a server answering there again (a restarted one)", and
// "stopping one server of several fails no call". So the calls made after the Stop all go to
// the other server. Before, the reply of the call the stopping server ran (any reply revived an
// inactive endpoint) put it back into rotation, and the next call that picked it dialled the
// closed port and failed with a refused connect (retries = 0, TARS's default).
func TestBalanceStopNoticeNotUndoneByReply(t *testing.T) {
	a := startLB(t, "a", "127.0.0.1")
	b := &lbSrv{id: "b", addr: "127.0.0.1:0", hold: make(chan struct{})}
	b.start(t)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(b.hold) }) }
	t.Cleanup(func() { release(); b.stop(t) })
	comm := lbComm(t, conf.Servant{}, func(c *conf.Config) {
		c.NetThread = 1
		livenessTimeouts(c)
	})
	sp := lbProxy(t, comm, a, b)
	if r := seqCalls(t, sp, 4); len(r.errs) > 0 || r.from["b"] == 0 {
		t.Fatalf("warm-up: %v", r)
	}
	ctx := testCtx(t)
	held := make(chan error, 4)
	for b.holding.Load() == 0 { // round robin: one of the first two goes to b
		go func() { _, err := sayHello(ctx, sp, "hold", 0); held <- err }()
		waitFor(t, "a hold call ends or waits on b", func() bool { return b.holding.Load() > 0 || len(held) > 0 })
		if b.holding.Load() == 0 {
			if err := <-held; err != nil {
				t.Fatal(err)
			}
		}
	}
	b.mu.Lock()
	srv := b.srv
	b.srv = nil
	b.mu.Unlock()
	stopped := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), live)
		defer cancel()
		stopped <- srv.Stop(sctx)
	}()
	inactive := func() bool {
		for _, e := range comm.Stats().Endpoints {
			if e.Endpoint == b.addr && !e.Active {
				return true
			}
		}
		return false
	}
	waitFor(t, "the stop notice takes b out of rotation", inactive)
	release()
	if err := <-held; err != nil {
		t.Fatalf("the call b ran as it stopped: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	close(b.quit)
	t.Logf("after b's Stop: b inactive in Stats: %v", inactive())
	for i := range 20 {
		from, err := sayHello(ctx, sp, "after", uint64(i))
		if err != nil || from != "a" {
			t.Fatalf("call %d after one of two servers stopped gracefully: from %q, err %v; want every call answered by a", i, from, err)
		}
	}
}
