package registry_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/server"
)

// TestMain fails the package if a test leaves a goroutine behind (the two ignored ones are
// started by gnet's dependency ants in its package init).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

const hour = time.Hour // an interval a test must never wait for

// answer is one scripted reply of the registry: a return code and the endpoints.
type answer struct {
	ret              int32
	active, inactive []endpointf.EndpointF
}

func tcp(port int32) endpointf.EndpointF {
	return endpointf.EndpointF{Host: "127.0.0.1", Port: port, Istcp: 1, Groupworkid: -1}
}

func ok(ports ...int32) answer {
	a := answer{active: []endpointf.EndpointF{}}
	for _, p := range ports {
		a.active = append(a.active, tcp(p))
	}
	return a
}

var refuse = answer{ret: -1}

// queryServer is QueryF served by the project's server on loopback, answering from a script
// (its last answer repeats) and counting the queries.
type queryServer struct {
	queryf.UnimplementedQueryFServer
	srv  *server.Server
	addr string

	mu     sync.Mutex
	script []answer
	asked  []string
}

func startQueryServer(t *testing.T, script ...answer) *queryServer {
	t.Helper()
	q := &queryServer{script: script}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("registry")), server.WithNumEventLoop(1))
	if err := queryf.RegisterQueryF(s, "tars.tarsregistry.QueryObj", q); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	q.srv, q.addr = s, a.String()
	t.Cleanup(q.stop)
	return q
}

func (q *queryServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = q.srv.Stop(ctx)
}

func (q *queryServer) next(what string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, what)
	a := q.script[0]
	if len(q.script) > 1 {
		q.script = q.script[1:]
	}
	return a.ret, a.active, a.inactive, nil
}

func (q *queryServer) FindObjectByIdInSameGroup(_ context.Context, _ *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return q.next("group " + id)
}

func (q *queryServer) FindObjectByIdInSameSet(_ context.Context, _ *server.Current, id, set string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return q.next("set " + id + " " + set)
}

func (q *queryServer) queries() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.asked...)
}

func (q *queryServer) locator() string {
	host, port, _ := net.SplitHostPort(q.addr)
	return "tars.tarsregistry.QueryObj@tcp -h " + host + " -p " + port
}

// queryProxy returns a QueryF proxy to locator through a Communicator of its own, closed (within
// a bound, with the goroutines' stacks on a hang) by t.Cleanup.
func queryProxy(t *testing.T, locator string) *queryf.QueryFProxy {
	t.Helper()
	cfg := conf.Default()
	cfg.NetThread = 1
	cfg.ConnectTimeout = time.Second
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { _ = c.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			t.Errorf("Communicator.Close hung; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
	})
	sp, err := c.Proxy(locator)
	if err != nil {
		t.Fatal(err)
	}
	return queryf.NewQueryFProxy(sp)
}

// events records a watch's pushes ("push 1,2 / 3" for active 1,2 and inactive 3) and failures
// ("fail: <error>").
type events struct {
	mu   sync.Mutex
	list []string
	errs []error
	more chan struct{}
}

func newEvents() *events { return &events{more: make(chan struct{}, 1)} }

func (e *events) add(s string, err error) {
	e.mu.Lock()
	e.list = append(e.list, s)
	if err != nil {
		e.errs = append(e.errs, err)
	}
	e.mu.Unlock()
	select {
	case e.more <- struct{}{}:
	default:
	}
}

func (e *events) push(l naming.List) {
	s := "push "
	for i, x := range l.Active {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s:%d", x.Proto, x.Port)
	}
	if len(l.Inactive) > 0 {
		s += " /"
		for _, x := range l.Inactive {
			s += fmt.Sprintf(" %s:%d", x.Proto, x.Port)
		}
	}
	e.add(s, nil)
}

func (e *events) fail(err error) {
	e.add("fail", err)
}

func (e *events) snapshot() ([]string, []error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.list...), append([]error(nil), e.errs...)
}

// waitFor waits (10s, a liveness bound) until there are n events, and returns them.
func (e *events) waitFor(t *testing.T, n int) ([]string, []error) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, errs := e.snapshot()
		if len(got) >= n {
			return got, errs
		}
		select {
		case <-e.more:
		case <-deadline:
			t.Fatalf("waited for %d events, got %v", n, got)
		}
	}
}

// TestSchedule follows scripted registries with the intervals under test made short and every
// other one an hour, so that a wrong choice of interval stalls the watch and fails the test: the
// watch must see exactly the events listed, in order, and the registry exactly that many
// queries.
func TestSchedule(t *testing.T) {
	const short = 5 * time.Millisecond
	tests := []struct {
		name    string
		opts    registry.Options
		script  []answer
		want    []string // the events, in order
		queries int      // the registry's queries once they have happened (no more follow)
	}{
		{
			name:    "failures retry every FailRetry, then an answer is pushed",
			opts:    registry.Options{Refresh: hour, FailRetry: short, SlowFailRetry: hour, EmptyRetry: hour},
			script:  []answer{refuse, refuse, ok(1)},
			want:    []string{"fail", "fail", "push tcp:1"},
			queries: 3,
		},
		{
			name:    "after more than 3 failures in a row, SlowFailRetry",
			opts:    registry.Options{Refresh: hour, FailRetry: short, SlowFailRetry: hour, EmptyRetry: hour},
			script:  []answer{refuse},
			want:    []string{"fail", "fail", "fail", "fail"},
			queries: 4,
		},
		{
			name:    "an answer resets the failure count",
			opts:    registry.Options{Refresh: short, FailRetry: short, SlowFailRetry: hour, EmptyRetry: hour},
			script:  []answer{refuse, refuse, refuse, ok(1), refuse},
			want:    []string{"fail", "fail", "fail", "push tcp:1", "fail", "fail", "fail", "fail"},
			queries: 8,
		},
		{
			name:    "an empty list for an object never seen is pushed once, retried every EmptyRetry",
			opts:    registry.Options{Refresh: hour, FailRetry: hour, SlowFailRetry: hour, EmptyRetry: short},
			script:  []answer{ok(), ok(), ok(2)},
			want:    []string{"push ", "push tcp:2"},
			queries: 3,
		},
		{
			name:    "an empty list after a good one keeps the good one",
			opts:    registry.Options{Refresh: short, FailRetry: hour, SlowFailRetry: hour, EmptyRetry: hour},
			script:  []answer{ok(1), ok()},
			want:    []string{"push tcp:1"},
			queries: 2,
		},
		{
			name:    "every Refresh, changes are followed",
			opts:    registry.Options{Refresh: short, FailRetry: hour, SlowFailRetry: hour, EmptyRetry: hour},
			script:  []answer{ok(1), ok(1, 2), ok(2), ok()},
			want:    []string{"push tcp:1", "push tcp:1,tcp:2", "push tcp:2"},
			queries: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs := startQueryServer(t, tt.script...)
			tt.opts.Log = zaptest.NewLogger(t)
			r := registry.New(queryProxy(t, qs.locator()), tt.opts)
			ev := newEvents()
			stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
			defer stop()
			got, errs := ev.waitFor(t, len(tt.want))
			got = got[:len(tt.want)]
			if strings.Join(got, " | ") != strings.Join(tt.want, " | ") {
				t.Fatalf("events %q, want %q", got, tt.want)
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), "return code -1") || !strings.Contains(err.Error(), "in a row") {
					t.Errorf("failure %d: %q, want the return code and the count", i, err)
				}
			}
			// The next query is an hour away: the count is final once reached.
			deadline := time.Now().Add(10 * time.Second)
			for len(qs.queries()) < tt.queries && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			if q := qs.queries(); len(q) != tt.queries || q[0] != "group A.B.C" {
				t.Fatalf("registry asked %v, want %d findObjectByIdInSameGroup(A.B.C)", q, tt.queries)
			}
			if all, _ := ev.snapshot(); len(all) != len(tt.want) {
				t.Fatalf("events %q, want exactly %q", all, tt.want)
			}
		})
	}
}

// TestKeepsSSLAndUDP: the registry's ssl (istcp 2) and udp (istcp 0) endpoints are passed on,
// active and inactive; unusable ones are left out with one warning, however many answers list
// them. Before the fixes only istcp 1 was kept, then only 1 and 2.
func TestKeepsSSLAndUDP(t *testing.T) {
	ssl := func(p int32) endpointf.EndpointF { e := tcp(p); e.Istcp = 2; return e }
	udp := tcp(3)
	udp.Istcp = 0
	noHost := tcp(4)
	noHost.Host = ""
	qs := startQueryServer(t, answer{
		active:   []endpointf.EndpointF{tcp(1), udp, ssl(2), noHost},
		inactive: []endpointf.EndpointF{ssl(5), noHost},
	})
	core, logs := observer.New(zap.WarnLevel)
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{Refresh: 5 * time.Millisecond, Log: zap.New(core)})
	ev := newEvents()
	stop := r.Watch(naming.Query{Object: "A.B.C"}, ev.push)
	got, _ := ev.waitFor(t, 3) // three answers
	stop()
	for _, e := range got {
		if e != "push udp:3,tcp:1,ssl:2 / ssl:5" { // in TarsCpp's order: istcp 0, 1, 2
			t.Fatalf("pushed %q, want the tcp, udp and ssl endpoints", got)
		}
	}
	badWarn := 0
	for _, l := range logs.All() {
		if strings.Contains(l.Message, "no usable address") {
			badWarn++
		}
	}
	if badWarn != 1 {
		t.Fatalf("%d bad-address warnings over %d answers, want 1: %v", badWarn, len(got), logs.All())
	}
}

// TestDeadRegistry: a registry nobody answers for (a port this test opened and closed) is
// reported as a connection failure.
func TestDeadRegistry(t *testing.T) {
	qs := startQueryServer(t, ok(1))
	qs.stop()
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{FailRetry: hour, Log: zaptest.NewLogger(t)})
	ev := newEvents()
	stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
	defer stop()
	got, errs := ev.waitFor(t, 1)
	if got[0] != "fail" || !errors.Is(errs[0], communicator.ErrConnection) || !strings.Contains(errs[0].Error(), "findObjectByIdInSameGroup") {
		t.Fatalf("events %v (%v), want a connection failure of findObjectByIdInSameGroup", got, errs)
	}
}

// TestSetQuery: a query with a set asks findObjectByIdInSameSet.
func TestSetQuery(t *testing.T) {
	qs := startQueryServer(t, ok(7))
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{Log: zaptest.NewLogger(t)})
	l, err := r.Query(context.Background(), naming.Query{Object: "A.B.C", Set: "app.sz.1"})
	if err != nil || len(l.Active) != 1 || l.Active[0].Port != 7 {
		t.Fatalf("Query = %v, %v", l, err)
	}
	if q := qs.queries(); len(q) != 1 || q[0] != "set A.B.C app.sz.1" {
		t.Fatalf("registry asked %v", q)
	}
}
