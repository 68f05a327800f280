package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// Soak: everything of the public API at once, under -race, then Close in the middle.

const soakServant = "Soak.Server.GreeterObj"
const soakPushServant = "Soak.Server.PushObj"

// soakServer is a project server answering SayHello (after a delay the request's name asks for)
// and, on soakPushServant, Subscribe (keeping the connection's Pusher).
type soakServer struct {
	srv  *server.Server
	addr string
	udp  bool
	mu   sync.Mutex
	subs []*server.Pusher
}

func startSoakServer(t *testing.T) *soakServer { return startSoakServerOn(t, false) }

func startSoakServerOn(t *testing.T, udp bool) *soakServer {
	t.Helper()
	endToEnd(t)
	ss := &soakServer{udp: udp}
	s := server.New(server.WithLogger(zap.NewNop()), server.WithNumEventLoop(1), server.WithWorkers(16))
	if err := server.HandleProto(s, soakServant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if d, err := time.ParseDuration(strings.TrimPrefix(req.GetName(), "d")); err == nil && d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@x", Seq: req.GetSeq()}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(soakPushServant, "Subscribe", func(_ context.Context, cur *server.Current, _, rsp []byte) ([]byte, error) {
		ss.mu.Lock()
		ss.subs = append(ss.subs, cur.Pusher())
		ss.mu.Unlock()
		return append(rsp, "ok"...), nil
	}); err != nil {
		t.Fatal(err)
	}
	at := "127.0.0.1:0"
	if udp {
		at = "udp://127.0.0.1:0"
	}
	a, err := s.Start(at)
	if err != nil {
		t.Fatal(err)
	}
	ss.srv, ss.addr = s, a.String()
	return ss
}

func (ss *soakServer) stop(t *testing.T) {
	_ = stopServer(t, "soak server "+ss.addr, ss.srv)
}

func (ss *soakServer) ep() endpoint.Endpoint {
	str := tcpEndpoint(ss.addr)
	if ss.udp {
		str = "udp" + strings.TrimPrefix(str, "tcp")
	}
	e, err := endpoint.ParseEndpoint(str)
	if err != nil {
		panic(err)
	}
	return e
}

func (ss *soakServer) pushAll(n int) {
	ss.mu.Lock()
	subs := ss.subs
	ss.mu.Unlock()
	for _, p := range subs {
		if !p.Closed() {
			_ = p.Push("Tick", []byte(strconv.Itoa(n)))
		}
	}
}

// soakSource is a naming source driven by the test; it calls push outside its lock, as a
// source with its own goroutine may.
type soakSource struct {
	mu     sync.Mutex
	pushes map[int]func(naming.List)
	next   int
}

func (s *soakSource) Watch(_ naming.Query, push func(naming.List)) func() {
	s.mu.Lock()
	if s.pushes == nil {
		s.pushes = map[int]func(naming.List){}
	}
	id := s.next
	s.next++
	s.pushes[id] = push
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.pushes, id)
		s.mu.Unlock()
	}
}

func (s *soakSource) send(eps []endpoint.Endpoint) {
	s.mu.Lock()
	var fs []func(naming.List)
	for _, f := range s.pushes {
		fs = append(fs, f)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f(naming.List{Active: eps})
	}
}

// soakTotals are Stats counters that only grow.
type soakTotals struct {
	calls, requests, writes, bytesOut, bytesIn, late uint64
}

func totalsOf(s stats.Snapshot) soakTotals {
	var t soakTotals
	for i := range s.Calls {
		t.calls += s.Calls[i].Calls()
	}
	for _, n := range s.Threads {
		t.requests += n.Requests
		t.writes += n.Writes
		t.bytesOut += n.BytesOut
		t.bytesIn += n.BytesIn
		t.late += n.LateReplies
	}
	return t
}

func (a soakTotals) lessAny(b soakTotals) string {
	var out []string
	chk := func(name string, x, y uint64) {
		if y < x {
			out = append(out, fmt.Sprintf("%s %d -> %d", name, x, y))
		}
	}
	chk("calls", a.calls, b.calls)
	chk("requests", a.requests, b.requests)
	chk("writes", a.writes, b.writes)
	chk("bytes_out", a.bytesOut, b.bytesOut)
	chk("bytes_in", a.bytesIn, b.bytesIn)
	chk("late_replies", a.late, b.late)
	return strings.Join(out, ", ")
}

type soakMix struct {
	name        string
	run         time.Duration
	sync, async int
	oneway      int
	futures     int
	churn       bool
	push        bool
	debug       bool
	proxies     bool
	lb          string
	backup      time.Duration
	threads     int
	asyncThread int
	edit        func(*conf.Config)
	closeMode   string
	account     bool
	udp         bool
}

// TestSoakEverything runs the whole public API concurrently (sync, async, one-way and future
// calls, backups, endpoint lists changing, servers restarting, pushes with their callback
// switched, the debug page, proxies made concurrently), then closes the Communicator in the
// middle of it all: every sync call returns, every accepted async call is called back once, no
// callback runs after Close returned, Close returns within a liveness bound, no goroutine is
// left, Stats totals never go down, and (the account variants) Stats counts every call once. A
// guard: it found only the backup counts (backup_count_test.go) when written.
func TestSoakEverything(t *testing.T) {
	for _, m := range []soakMix{
		{name: "account-churn-nobackup", account: true, run: 2 * time.Second, sync: 6, async: 6, oneway: 2, futures: 2, churn: true, push: true, debug: true, proxies: true, lb: "roundrobin", threads: 2, asyncThread: 2},
		{name: "udp-mixed", udp: true, run: 2 * time.Second, sync: 6, async: 6, oneway: 2, futures: 2, churn: true, push: true, debug: true, proxies: true, lb: "roundrobin", backup: 2 * time.Millisecond, threads: 2, asyncThread: 2},
		{name: "close-in-callback", closeMode: "callback", run: 2 * time.Second, sync: 6, async: 6, oneway: 2, futures: 2, churn: true, push: true, debug: true, proxies: true, lb: "roundrobin", backup: 3 * time.Millisecond, threads: 2, asyncThread: 1},
		{name: "close-concurrent", closeMode: "concurrent", run: 2 * time.Second, sync: 6, async: 6, oneway: 2, futures: 2, churn: true, push: true, debug: true, proxies: true, lb: "roundrobin", backup: 3 * time.Millisecond, threads: 2, asyncThread: 2},
		{name: "conns-short-retries", run: 2 * time.Second, sync: 6, async: 6, oneway: 2, futures: 2, churn: true, push: true, debug: true, proxies: true, lb: "least-inflight", backup: 2 * time.Millisecond, threads: 3, asyncThread: 3,
			edit: func(c *conf.Config) {
				sv := c.Servants[soakServant]
				sv.Connections, sv.Retries, sv.MaxInflight, sv.CircuitBreaker = 3, 2, 64, true
				c.Servants[soakServant] = sv
				c.KeepAliveInterval = 20 * time.Millisecond
			}},
		{name: "account-retries", account: true, run: 2 * time.Second, sync: 6, async: 6, oneway: 2, futures: 2, churn: true, lb: "roundrobin", threads: 2, asyncThread: 2,
			edit: func(c *conf.Config) {
				sv := c.Servants[soakServant]
				sv.Connections, sv.Retries, sv.MaxInflight, sv.CircuitBreaker, sv.ShortConnections = 2, 2, 64, true, true
				c.Servants[soakServant] = sv
			}},
	} {
		name := m.name
		if name == "" {
			name = m.lb
		}
		t.Run(name, func(t *testing.T) { runSoak(t, m) })
	}
}

func runSoak(t *testing.T, m soakMix) {
	stable := startSoakServer(t)
	t.Cleanup(func() { stable.stop(t) })

	var liveMu sync.Mutex
	live := []*soakServer{}
	for range 3 {
		live = append(live, startSoakServerOn(t, m.udp))
	}
	t.Cleanup(func() {
		liveMu.Lock()
		defer liveMu.Unlock()
		for _, s := range live {
			s.stop(t)
		}
	})

	src := &soakSource{}
	cfg := conf.Default()
	cfg.NetThread = m.threads
	cfg.AsyncThread = m.asyncThread
	cfg.LoadBalance = m.lb
	cfg.SyncInvokeTimeout = 2 * time.Second
	cfg.AsyncInvokeTimeout = 2 * time.Second
	cfg.Servants = map[string]conf.Servant{soakServant: {}}
	if m.backup != 0 {
		cfg.Servants[soakServant] = conf.Servant{BackupRequest: m.backup, BackupBudget: 1, Idempotent: []string{"SayHello"}}
	}
	if m.edit != nil {
		m.edit(&cfg)
	}
	comm, err := communicator.New(cfg, communicator.WithNaming(src), communicator.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = closeComm(t, comm)
		}
	})

	direct, err := comm.Proxy(soakServant + "@" + tcpEndpoint(stable.addr))
	if err != nil {
		t.Fatal(err)
	}
	named, err := comm.Proxy(soakServant)
	if err != nil {
		t.Fatal(err)
	}
	pushPrx, err := comm.Proxy(soakPushServant + "@" + tcpEndpoint(stable.addr))
	if err != nil {
		t.Fatal(err)
	}
	sendList := func() {
		liveMu.Lock()
		var eps []endpoint.Endpoint
		for _, s := range live {
			if rand.IntN(3) != 0 {
				eps = append(eps, s.ep())
			}
		}
		if len(eps) == 0 {
			eps = append(eps, live[0].ep())
		}
		liveMu.Unlock()
		src.send(eps)
	}
	sendList()

	var closeReturned atomic.Bool // set once Close returned
	var closing atomic.Bool       // set just before Close is called
	var lateCallbacks atomic.Int64
	var lateWhat atomic.Value

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failMu sync.Mutex
	var fails []string
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		if len(fails) < 20 {
			fails = append(fails, fmt.Sprintf(format, args...))
		}
	}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	proxies := []*servantproxy.ServantProxy{direct, named}
	var extra sync.Map // proxies made during the run
	pick := func(r *rand.Rand) *servantproxy.ServantProxy {
		if r.IntN(4) == 0 {
			var got *servantproxy.ServantProxy
			extra.Range(func(_, v any) bool {
				got = v.(*servantproxy.ServantProxy)
				return r.IntN(3) != 0
			})
			if got != nil {
				return got
			}
		}
		return proxies[r.IntN(len(proxies))]
	}
	callCtx := func(r *rand.Rand) (context.Context, context.CancelFunc) {
		switch r.IntN(5) {
		case 0:
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Duration(r.IntN(3000))*time.Microsecond, cancel)
			return ctx, cancel
		case 1:
			return context.WithTimeout(context.Background(), time.Duration(1+r.IntN(30))*time.Millisecond)
		default:
			return context.WithTimeout(context.Background(), 3*time.Second)
		}
	}
	reqName := func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return "d" + (time.Duration(r.IntN(8)) * time.Millisecond).String()
		}
		return "n"
	}
	// checkErr: an error the soak can produce; anything else is a finding.
	var classMu sync.Mutex
	classes := map[string]int{}
	var infos []string
	checkErr := func(kind string, err error) {
		cl := "ok"
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			cl = "canceled"
		case errors.Is(err, communicator.ErrTimeout):
			cl = "timeout"
		case errors.Is(err, communicator.ErrClosed):
			cl = "closed"
		case errors.Is(err, communicator.ErrConnection):
			cl = "conn"
		case errors.Is(err, communicator.ErrNoEndpoint):
			cl = "noep"
		default:
			cl = "other"
			if rand.IntN(20) == 0 {
				classMu.Lock()
				if len(infos) < 6 {
					infos = append(infos, fmt.Sprintf("%s: %v", kind, err))
				}
				classMu.Unlock()
			}
		}
		classMu.Lock()
		classes[kind+":"+cl]++
		classMu.Unlock()
		if err == nil {
			return
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, communicator.ErrTimeout) || errors.Is(err, communicator.ErrClosed) ||
			errors.Is(err, communicator.ErrConnection) || errors.Is(err, communicator.ErrNoEndpoint) || errors.Is(err, communicator.ErrQueueFull) || errors.Is(err, communicator.ErrOverload) {
			return
		}
		var se *communicator.ServerError
		if errors.As(err, &se) {
			return // a server stopping answers its handlers in flight
		}
		fail("%s: unexpected error %v", kind, err)
	}

	var syncStarted, syncReturned atomic.Int64
	var asyncAccepted, asyncCallbacks, asyncDouble, asyncRefused atomic.Int64
	var futStarted, futDone atomic.Int64
	var onewayN, onewayFailed atomic.Int64

	// Sync callers.
	for i := range m.sync {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for seq := uint64(0); !stopped(); seq++ {
				ctx, cancel := callCtx(r)
				sp := pick(r)
				name := reqName(r)
				syncStarted.Add(1)
				after := closeReturned.Load()
				rsp := new(hellopb.HelloReply)
				err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp)
				syncReturned.Add(1)
				if dl, ok := ctx.Deadline(); after && !errors.Is(err, communicator.ErrClosed) && ctx.Err() == nil && (!ok || time.Now().Before(dl)) {
					fail("sync call begun after Close returned: %v, want ErrClosed", err)
				}
				cancel()
				if err == nil && (rsp.GetSeq() != seq || rsp.GetMessage() != name+"@x") {
					fail("sync call %q/%d answered %q/%d", name, seq, rsp.GetMessage(), rsp.GetSeq())
				}
				checkErr("sync", err)
			}
		})
	}
	// Async callers.
	for i := range m.async {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 2))
			var out sync.WaitGroup
			for seq := uint64(0); !stopped(); seq++ {
				ctx, cancel := callCtx(r)
				sp := pick(r)
				name := reqName(r)
				rsp := new(hellopb.HelloReply)
				var ran atomic.Int32
				after := closeReturned.Load()
				out.Add(1)
				err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp, func(err error) {
					if closeReturned.Load() {
						lateCallbacks.Add(1)
						lateWhat.Store("async callback")
					}
					if ran.Add(1) != 1 {
						asyncDouble.Add(1)
						return
					}
					asyncCallbacks.Add(1)
					if err == nil && (rsp.GetSeq() != seq || rsp.GetMessage() != name+"@x") {
						fail("async call %q/%d answered %q/%d", name, seq, rsp.GetMessage(), rsp.GetSeq())
					}
					checkErr("async", err)
					cancel()
					out.Done()
				})
				if err != nil {
					out.Done()
					cancel()
					checkErr("async refused", err)
					asyncRefused.Add(1)
					continue
				}
				if after {
					fail("async call begun after Close returned was accepted")
				}
				asyncAccepted.Add(1)
				if r.IntN(8) == 0 {
					time.Sleep(time.Millisecond)
				}
				if seq%16 == 0 {
					// bound outstanding calls
					out.Wait()
				}
			}
			// Do not wait here: callbacks not run are counted below.
		})
	}
	// One-way callers.
	for i := range m.oneway {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 3))
			for seq := uint64(0); !stopped(); seq++ {
				ctx, cancel := callCtx(r)
				err := pick(r).InvokeOneway(ctx, "SayHello", &hellopb.HelloRequest{Name: "n", Seq: seq})
				cancel()
				onewayN.Add(1)
				if err != nil {
					onewayFailed.Add(1)
				}
				checkErr("oneway", err)
				time.Sleep(200 * time.Microsecond)
			}
		})
	}
	// Future callers.
	for i := range m.futures {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 4))
			for seq := uint64(0); !stopped(); seq++ {
				ctx, cancel := callCtx(r)
				name := reqName(r)
				futStarted.Add(1)
				f := pick(r).FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, new(hellopb.HelloReply))
				gctx, gcancel := context.WithTimeout(context.Background(), 10*time.Second)
				v, err := f.Get(gctx)
				gerr := gctx.Err()
				gcancel()
				cancel()
				if gerr != nil {
					fail("future %d did not complete within 10s", seq)
					continue
				}
				futDone.Add(1)
				if err == nil {
					rsp := v.(*hellopb.HelloReply)
					if rsp.GetSeq() != seq || rsp.GetMessage() != name+"@x" {
						fail("future %q/%d answered %q/%d", name, seq, rsp.GetMessage(), rsp.GetSeq())
					}
				}
				checkErr("future", err)
			}
		})
	}
	// Naming updates.
	wg.Go(func() {
		for !stopped() {
			sendList()
			time.Sleep(3 * time.Millisecond)
		}
	})
	// Servers stop and start on new ports.
	if m.churn {
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				time.Sleep(300 * time.Millisecond)
				ns := startSoakServerOn(t, m.udp && i%2 == 0)
				liveMu.Lock()
				old := live[i%len(live)]
				live[i%len(live)] = ns
				liveMu.Unlock()
				sendList()
				old.stop(t)
			}
		})
	}
	// Stats: totals never go down (until Close starts), between snapshots that hold every net
	// thread. A thread that does not answer within a second (a busy machine) is left out of a
	// snapshot, its counters with it (Communicator.Stats says so); such a read is not compared.
	var statsReads, statsPartial atomic.Int64
	wg.Go(func() {
		var prev soakTotals
		for !stopped() {
			if closing.Load() {
				_ = comm.Stats()
				time.Sleep(time.Millisecond)
				continue
			}
			s := comm.Stats()
			if closing.Load() {
				continue
			}
			if len(s.Threads) != m.threads {
				statsPartial.Add(1)
				continue
			}
			cur := totalsOf(s)
			if d := prev.lessAny(cur); d != "" {
				fail("Stats totals went down between two reads: %s", d)
			}
			prev = cur
			statsReads.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	})
	// Debug page.
	if m.debug {
		hs := httptest.NewServer(comm.DebugHandler())
		t.Cleanup(hs.Close)
		wg.Go(func() {
			cl := hs.Client()
			for i := 0; !stopped(); i++ {
				u := hs.URL + "/"
				if i%2 == 0 {
					u += "?format=json"
				}
				resp, err := cl.Get(u)
				if err != nil {
					fail("debug page: %v", err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					fail("debug page %s: %s", u, resp.Status)
				}
				time.Sleep(5 * time.Millisecond)
			}
			cl.CloseIdleConnections()
		})
	}
	// Push: the server pushes, the client switches its callback.
	var pushes atomic.Int64
	if m.push {
		cb := func(tag string) *servantproxy.PushCallback {
			note := func(what string) {
				if closeReturned.Load() {
					lateCallbacks.Add(1)
					lateWhat.Store(what)
				}
			}
			return &servantproxy.PushCallback{
				OnPush:    func(*servantproxy.Push) { note("OnPush " + tag); pushes.Add(1) },
				OnConnect: func(string) { note("OnConnect " + tag) },
				OnClose:   func(string, error) { note("OnClose " + tag) },
			}
		}
		cbs := []*servantproxy.PushCallback{cb("a"), cb("b"), nil}
		pushPrx.SetPushCallback(cbs[0])
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := pushPrx.InvokeRaw(ctx, "Subscribe", nil)
				cancel()
				checkErr("subscribe", err)
				time.Sleep(50 * time.Millisecond)
			}
		})
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				stable.pushAll(i)
				time.Sleep(200 * time.Microsecond)
			}
		})
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				pushPrx.SetPushCallback(cbs[i%len(cbs)])
				time.Sleep(time.Millisecond)
			}
		})
	}
	// Proxies made concurrently, for the same and for different objects.
	if m.proxies {
		for w := range 3 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 5))
				for i := 0; !stopped(); i++ {
					var s string
					switch r.IntN(4) {
					case 0:
						s = soakServant
					case 1:
						s = soakServant + "#t" + strconv.Itoa(r.IntN(4))
					case 2:
						s = soakServant + "@" + tcpEndpoint(stable.addr)
					default:
						s = "Soak.Server.Other" + strconv.Itoa(r.IntN(50)) + "Obj@" + tcpEndpoint(stable.addr)
					}
					var sp servantproxy.ServantProxy
					var err error
					if r.IntN(2) == 0 {
						err = comm.StringToProxy(s, &sp)
					} else {
						var p *servantproxy.ServantProxy
						p, err = comm.Proxy(s)
						if p != nil {
							sp = *p
						}
					}
					if err != nil {
						if !errors.Is(err, communicator.ErrClosed) {
							fail("proxy %q: %v", s, err)
						}
						time.Sleep(time.Millisecond)
						continue
					}
					if strings.HasPrefix(s, soakServant) {
						cp := sp
						extra.Store(s, &cp)
					}
					time.Sleep(500 * time.Microsecond)
				}
			})
		}
	}

	time.Sleep(m.run)
	if m.account {
		// Quiesce, then every call made is in Stats once.
		close(stop)
		wgDone := make(chan struct{})
		go func() { wg.Wait(); close(wgDone) }()
		select {
		case <-wgDone:
		case <-time.After(15 * time.Second):
			t.Fatalf("callers did not stop; goroutines:\n%s", allStacks())
		}
		waitFor(t, "every async callback", func() bool { return asyncCallbacks.Load() == asyncAccepted.Load() })
		// Calls still pending on a net thread (a backup's loser) do not count, nor one-way calls
		// that were sent (they have no outcome); those that failed do.
		want := uint64(syncReturned.Load() + asyncAccepted.Load() + asyncRefused.Load() + futStarted.Load() + onewayFailed.Load())
		var got uint64
		byRes := map[stats.Result]uint64{}
		time.Sleep(200 * time.Millisecond)
		var snap stats.Snapshot
		waitFor(t, "a snapshot with every net thread", func() bool {
			snap = comm.Stats()
			return len(snap.Threads) == m.threads
		})
		for _, c := range snap.Calls {
			if c.Servant == soakServant {
				got += c.Calls()
				for r, n := range c.Results {
					byRes[stats.Result(r)] += n
				}
			}
		}
		if got != want {
			t.Errorf("Stats counts %d calls of %s, the test made %d (sync %d, async %d+%d refused, future %d, oneway %d failed of %d); by result %v",
				got, soakServant, want, syncReturned.Load(), asyncAccepted.Load(), asyncRefused.Load(), futStarted.Load(), onewayFailed.Load(), onewayN.Load(), byRes)
		}
		_ = closeComm(t, comm)
		closed = true
		failMu.Lock()
		for _, f := range fails {
			t.Error(f)
		}
		failMu.Unlock()
		return
	}
	closing.Store(true)
	var closeErr error
	closeDone := make(chan struct{})
	var closers sync.WaitGroup
	switch m.closeMode {
	case "callback":
		// One async callback closes the Communicator; another goroutine closes it too.
		ctx := context.Background()
		_ = direct.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "closer"}, new(hellopb.HelloReply), func(error) {
			_ = comm.Close()
		})
		time.Sleep(time.Millisecond)
	case "concurrent":
		for range 4 {
			closers.Go(func() { _ = comm.Close() })
		}
	}
	go func() {
		closeErr = comm.Close()
		closeReturned.Store(true)
		closers.Wait()
		close(closeDone)
	}()
	select {
	case <-closeDone:
	case <-time.After(15 * time.Second):
		t.Fatalf("Close did not return within 15s with traffic running; goroutines:\n%s", allStacks())
	}
	closed = true
	if closeErr != nil {
		t.Errorf("Close: %v", closeErr)
	}
	// Traffic goes on a little after Close returned: every call must fail at once.
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wgDone := make(chan struct{})
	go func() { wg.Wait(); close(wgDone) }()
	select {
	case <-wgDone:
	case <-time.After(15 * time.Second):
		t.Fatalf("callers still in calls 15s after Close returned (sync started %d, returned %d); goroutines:\n%s",
			syncStarted.Load(), syncReturned.Load(), allStacks())
	}
	// Every accepted async call got its callback by the time Close returned (Close runs the
	// callbacks that are due). A little slack for callbacks already running when Close
	// returned? No: Close waits for them.
	if a, c := asyncAccepted.Load(), asyncCallbacks.Load(); a != c {
		t.Errorf("async calls accepted %d, callbacks run %d: want one callback each", a, c)
	}
	if d := asyncDouble.Load(); d != 0 {
		t.Errorf("%d async callbacks ran twice", d)
	}
	if n := lateCallbacks.Load(); n != 0 {
		t.Errorf("%d callbacks ran after Close returned (last: %v)", n, lateWhat.Load())
	}
	if s, r := syncStarted.Load(), syncReturned.Load(); s != r {
		t.Errorf("sync calls started %d, returned %d", s, r)
	}
	if s, d := futStarted.Load(), futDone.Load(); s != d {
		t.Errorf("futures started %d, completed %d", s, d)
	}
	failMu.Lock()
	for _, f := range fails {
		t.Error(f)
	}
	failMu.Unlock()
	for _, sp := range []*servantproxy.ServantProxy{direct, named} {
		if n := sp.Inflight(); n != 0 {
			t.Errorf("%s: Inflight %d after Close, want 0", sp.Name(), n)
		}
	}
	t.Logf("outcomes %v", classes)
	for _, i := range infos {
		t.Logf("other error: %s", i)
	}
	t.Logf("sync %d, async %d (callbacks %d), futures %d, oneway %d, pushes %d, stats reads %d (and %d lacking a net thread)",
		syncReturned.Load(), asyncAccepted.Load(), asyncCallbacks.Load(), futDone.Load(), onewayN.Load(), pushes.Load(), statsReads.Load(), statsPartial.Load())
}
