package communicator_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// rvcServer is a project server that records every request it runs: by "name/seq", which server
// and which client connection (remote address) ran it. Names starting with "slow" block until
// release (or the server stops).
type rvcServer struct {
	id      string
	srv     *server.Server
	addr    string
	release chan struct{}
	log     *rvcLog
}

type rvcRun struct {
	server, conn string
}

type rvcLog struct {
	mu   sync.Mutex
	runs map[string][]rvcRun
}

func (l *rvcLog) add(key string, r rvcRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[key] = append(l.runs[key], r)
}

func (l *rvcLog) get(key string) []rvcRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]rvcRun(nil), l.runs[key]...)
}

func newRVCLog() *rvcLog { return &rvcLog{runs: map[string][]rvcRun{}} }

func startRVC(t *testing.T, id string, log *rvcLog) *rvcServer {
	t.Helper()
	endToEnd(t)
	g := &rvcServer{id: id, release: make(chan struct{}), log: log}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1), server.WithWorkers(64))
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if !ownCaller(cur) {
			return nil, fmt.Errorf("not this test's caller")
		}
		log.add(fmt.Sprintf("%s/%d", req.GetName(), req.GetSeq()), rvcRun{server: id, conn: cur.RemoteAddr.String()})
		if strings.HasPrefix(req.GetName(), "slow") {
			stop, done := stopped(ctx, false)
			defer done()
			select {
			case <-g.release:
			case <-stop:
				return nil, ctx.Err()
			}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.srv, g.addr = s, a.String()
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
		_ = stopServer(t, "server "+id, s)
	})
	return g
}

func (g *rvcServer) endpoint() string { return tcpEndpoint(g.addr) }

// deadAddr returns a loopback address nothing listens on.
func rvcDeadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	_ = l.Close()
	return a
}

// TestCombosHashConnsRetryDown: a hashed call with connections = 3 and retries = 1 whose
// endpoint refuses connections. Every call with a code that falls on the dead endpoint must
// succeed (it fails unsent, so it is retried), run exactly once, and all calls with one code must
// be served by one server (the hash's fallback), the pair counted once in Stats. A guard: it
// passed when written (a review of combined routing features).
func TestCombosHashConnsRetryDown(t *testing.T) {
	log := newRVCLog()
	var strs []string
	for _, id := range []string{"a", "b", "c"} {
		strs = append(strs, startRVC(t, id, log).endpoint())
	}
	dead := rvcDeadAddr(t)
	strs = append(strs, tcpEndpoint(dead))
	var eps []endpoint.Endpoint
	for _, s := range strs {
		e, err := endpoint.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e)
	}
	endpoint.SortTars(eps)
	ix := -1
	deadEP, _ := endpoint.ParseEndpoint(tcpEndpoint(dead))
	for i, e := range eps {
		if e == deadEP {
			ix = i
		}
	}
	if ix < 0 {
		t.Fatal("the refusing endpoint is not in the sorted list")
	}
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Health.MaxConnectFail = 1000
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "hash", Retries: 1, Connections: 3}}
	})
	sp := proxyToAddrs(t, comm, strs...)
	ctx := testCtx(t)
	calls := 0
	for code := uint64(0); code < 24; code++ {
		if code%4 != uint64(ix) {
			continue
		}
		served := map[string]int{}
		for k := range 8 {
			seq := code*100 + uint64(k)
			from, err := sayHello(ctx, sp, "h", seq, servantproxy.WithHash(code))
			calls++
			if err != nil {
				t.Fatalf("hashed call code %d #%d (its endpoint refuses, retries = 1): %v; want it retried and answered", code, k, err)
			}
			served[from]++
			if runs := log.get(fmt.Sprintf("h/%d", seq)); len(runs) != 1 {
				t.Fatalf("call code %d #%d ran %d times (%v), want once", code, k, len(runs), runs)
			}
		}
		if len(served) != 1 {
			t.Errorf("calls with hash code %d were served by %v: want one server (the code's fallback)", code, served)
		}
	}
	if calls == 0 {
		t.Fatal("no code fell on the refusing endpoint: nothing was exercised")
	}
	var ok, all uint64
	for _, c := range comm.Stats().Calls {
		if c.Servant == servant && c.Function == "SayHello" {
			all += c.Calls()
			ok += c.Results[0]
		}
	}
	if all != uint64(calls) {
		t.Errorf("Stats counts %d calls (%d ok) for %d calls made: each retried call must count once", all, ok, calls)
	}
}

// TestCombosBackupConnsSlow: with connections = 3, a backup request of a call whose first
// request is on a slow endpoint goes to the other endpoint, never to another connection of the
// slow one. A guard: it passed when written.
func TestCombosBackupConnsSlow(t *testing.T) {
	log := newRVCLog()
	a := startRVC(t, "a", log)
	b := startRVC(t, "b", log)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{servant: {Connections: 3, BackupRequest: 20 * time.Millisecond, Idempotent: []string{"SayHello"}, BackupBudget: 1}}
	})
	sp := proxyToAddrs(t, comm, a.endpoint(), b.endpoint())
	ctx := testCtx(t)
	close(b.release) // b answers "slow" calls at once; a holds them until the test ends
	for seq := range uint64(12) {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		from, err := sayHello(cctx, sp, "slow", seq)
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v; want it answered by b (directly or by its backup)", seq, err)
		}
		if from != "b" {
			t.Fatalf("call %d answered by %s, want b", seq, from)
		}
		runs := log.get(fmt.Sprintf("slow/%d", seq))
		perServer := map[string]int{}
		for _, r := range runs {
			perServer[r.server]++
		}
		if perServer["a"] > 1 || perServer["b"] != 1 {
			t.Fatalf("call %d ran %v (%v): want at most once on a and once on b", seq, perServer, runs)
		}
	}
}
