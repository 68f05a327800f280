package tarsprom_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

const obsObj = "Obs.Scrape.EchoObj"

// oddNames are function names with characters the text format must escape, or that are
// unusual but valid UTF-8.
var oddNames = []string{`quo"te`, `back\slash`, "new\nline", "sp ace", "ünï©ødé", "a{b}=c,d", "tab\there"}

// obsServer starts a project server on loopback with the handlers; t.Cleanup stops it.
func obsServer(t *testing.T, opts []server.Option, hs map[string]server.HandlerFunc) (*server.Server, string) {
	t.Helper()
	s := server.New(append([]server.Option{server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1), server.WithWorkers(16)}, opts...)...)
	for fn, h := range hs {
		if err := s.Handle(obsObj, fn, h); err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	return s, a.String()
}

func echo(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
	return append(rsp, req...), nil
}

func obsComm(t *testing.T, cfg conf.Config, addr string, opts ...communicator.Option) (*communicator.Communicator, *servantproxy.ServantProxy) {
	t.Helper()
	comm, err := communicator.New(cfg, append([]communicator.Option{communicator.WithLogger(zaptest.NewLogger(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	host, port, _ := net.SplitHostPort(addr)
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(fmt.Sprintf("%s@tcp -h %s -p %s", obsObj, host, port), &sp); err != nil {
		t.Fatal(err)
	}
	return comm, &sp
}

// allCounters returns every counter (and histogram _count/_sum/_bucket) of a gathering by series.
func allCounters(mfs []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[seriesKey(mf.GetName(), m)] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[seriesKey(mf.GetName()+"_count", m)] = float64(h.GetSampleCount())
				out[seriesKey(mf.GetName()+"_sum", m)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[seriesKey(fmt.Sprintf("%s_bucket[le=%g]", mf.GetName(), b.GetUpperBound()), m)] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

func noneDown(t *testing.T, what string, prev, cur map[string]float64) {
	t.Helper()
	var bad []string
	for k, v := range cur {
		if pv, ok := prev[k]; ok && v < pv {
			bad = append(bad, fmt.Sprintf("%s: %v -> %v", k, pv, v))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%s: %d counters went down, e.g. %v", what, len(bad), bad[:min(len(bad), 5)])
	}
}

// TestExpositionLintHistogramLabels: real calls with odd function names, successes,
// server errors and slow successes through a 2-thread Communicator; the /metrics endpoint served by
// promhttp on 127.0.0.1 parses with the official text parser, lints clean with promlint (what
// testutil.CollectAndLint runs), label values round-trip exactly, every histogram is cumulative
// with _count equal to the +Inf bucket and to calls_total{result="ok"}, and _sum is in seconds.
func TestExpositionLintHistogramLabels(t *testing.T) {
	const slowSleep = 30 * time.Millisecond
	hs := map[string]server.HandlerFunc{
		"Slow": func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			time.Sleep(slowSleep)
			return append(rsp, req...), nil
		},
		"Fail": func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
			return nil, &server.Error{Code: -4321, Desc: "no"}
		},
	}
	for _, fn := range oddNames {
		hs[fn] = echo
	}
	srv, addr := obsServer(t, []server.Option{server.WithStats()}, hs)
	cfg := conf.Default()
	cfg.NetThread = 2
	comm, sp := obsComm(t, cfg, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const per = 5
	for _, fn := range oddNames {
		for range per {
			if _, err := sp.InvokeRaw(ctx, fn, []byte("x")); err != nil {
				t.Fatalf("%q: %v", fn, err)
			}
		}
	}
	for range 3 {
		if _, err := sp.InvokeRaw(ctx, "Fail", nil); err == nil {
			t.Fatal("Fail succeeded")
		}
	}
	var callerSlow time.Duration
	for range per {
		start := time.Now()
		if _, err := sp.InvokeRaw(ctx, "Slow", []byte("s")); err != nil {
			t.Fatal(err)
		}
		callerSlow += time.Since(start)
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}),
		tarsprom.NewCollector(srv.Stats, tarsprom.Options{Side: "server"}),
		tarsprom.NewLimitsCollector(srv.LimitStats, tarsprom.Options{}))
	hsrv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer hsrv.Close()
	mf := scrapeURL(t, hsrv.URL)

	// promlint over the parsed exposition.
	var buf bytes.Buffer
	for _, name := range sortedKeys(mf) {
		if _, err := expfmt.MetricFamilyToText(&buf, mf[name]); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("promlint input: %d bytes, %d families", buf.Len(), len(mf))
	problems, err := promlint.New(&buf).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}

	for _, fn := range oddNames {
		got := sum(mf, "tarscomm_client_calls_total", map[string]string{"function": fn, "result": "ok"})
		if got != per {
			t.Errorf("calls_total{function=%q,ok} = %v after the text round-trip, want %d", fn, got, per)
		}
	}
	if got := sum(mf, "tarscomm_client_server_errors_total", map[string]string{"function": "Fail", "code": "-4321"}); got != 3 {
		t.Errorf("server_errors_total{Fail,-4321} = %v, want 3", got)
	}
	okBy := map[string]float64{}
	for _, m := range mf["tarscomm_client_calls_total"].GetMetric() {
		if l := labels(m); l["result"] == "ok" {
			okBy[l["function"]+"|"+l["endpoint"]] += m.GetCounter().GetValue()
		}
	}
	for _, m := range mf["tarscomm_client_call_duration_seconds"].GetMetric() {
		l := labels(m)
		h := m.GetHistogram()
		var prev uint64
		var inf uint64
		sawInf := false
		for _, b := range h.GetBucket() {
			if b.GetCumulativeCount() < prev {
				t.Errorf("%q: bucket le=%v %d below the one before %d", l["function"], b.GetUpperBound(), b.GetCumulativeCount(), prev)
			}
			prev = b.GetCumulativeCount()
			if math.IsInf(b.GetUpperBound(), 1) {
				inf, sawInf = b.GetCumulativeCount(), true
			}
		}
		if !sawInf {
			inf = h.GetSampleCount() // the text format always has +Inf; the parser folds it in
		}
		if inf != h.GetSampleCount() || prev > h.GetSampleCount() {
			t.Errorf("%q: +Inf bucket %d (last %d), _count %d", l["function"], inf, prev, h.GetSampleCount())
		}
		if float64(h.GetSampleCount()) != okBy[l["function"]+"|"+l["endpoint"]] {
			t.Errorf("%q: _count %d, calls_total{ok} %v", l["function"], h.GetSampleCount(), okBy[l["function"]+"|"+l["endpoint"]])
		}
		if l["function"] == "Slow" {
			if h.GetSampleSum() < per*slowSleep.Seconds() || h.GetSampleSum() > callerSlow.Seconds() {
				t.Errorf("Slow: _sum %v, want between %v (handler sleeps) and %v (caller's own timing), in seconds",
					h.GetSampleSum(), per*slowSleep.Seconds(), callerSlow.Seconds())
			}
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() <= 0.025 && b.GetCumulativeCount() != 0 {
					t.Errorf("Slow: %d samples under le=%v, each took at least %v", b.GetCumulativeCount(), b.GetUpperBound(), slowSleep)
				}
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestTwoCommunicatorsOneRegistry: two Communicators (told apart by ConstLabels, as
// Prometheus requires), a server-side collector and a limits collector in one registry: no
// collision, no panic, and each counts its own calls.
func TestTwoCommunicatorsOneRegistry(t *testing.T) {
	srv, addr := obsServer(t, []server.Option{server.WithStats()}, map[string]server.HandlerFunc{"Echo": echo})
	c1, sp1 := obsComm(t, conf.Default(), addr)
	c2, sp2 := obsComm(t, conf.Default(), addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		if _, err := sp1.InvokeRaw(ctx, "Echo", nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if _, err := sp2.InvokeRaw(ctx, "Echo", nil); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	for _, c := range []prometheus.Collector{
		tarsprom.NewCollector(c1.Stats, tarsprom.Options{ConstLabels: prometheus.Labels{"comm": "one"}}),
		tarsprom.NewCollector(c2.Stats, tarsprom.Options{ConstLabels: prometheus.Labels{"comm": "two"}}),
		tarsprom.NewCollector(srv.Stats, tarsprom.Options{Side: "server"}),
		tarsprom.NewLimitsCollector(srv.LimitStats, tarsprom.Options{}),
	} {
		if err := reg.Register(c); err != nil {
			t.Fatalf("register: %v", err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	mf := byName(mfs)
	if got := sum(mf, "tarscomm_client_calls_total", map[string]string{"comm": "one", "result": "ok"}); got != 3 {
		t.Errorf("comm one: %v ok calls, want 3", got)
	}
	if got := sum(mf, "tarscomm_client_calls_total", map[string]string{"comm": "two", "result": "ok"}); got != 5 {
		t.Errorf("comm two: %v ok calls, want 5", got)
	}
	waitFor(t, "the server to count 8 calls", func() bool {
		mfs, err := reg.Gather()
		return err == nil && sum(byName(mfs), "tarscomm_server_calls_total", map[string]string{"result": "ok"}) == 8
	})
}

// TestQuiescentCountsAndMonotonic: sync, async and future callers run while two
// scrapers gather; no counter goes down between one scraper's scrapes, and once the callers are
// done the calls counted equal the calls made, and the histogram counts the successes.
func TestQuiescentCountsAndMonotonic(t *testing.T) {
	_, addr := obsServer(t, nil, map[string]server.HandlerFunc{"Echo": echo,
		"Fail": func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
			return nil, &server.Error{Code: -7, Desc: "no"}
		}})
	cfg := conf.Default()
	cfg.NetThread = 3
	comm, sp := obsComm(t, cfg, addr)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const workers, per = 4, 150
	var made, failed atomic.Int64
	var callers sync.WaitGroup
	for g := range workers {
		callers.Go(func() {
			for i := range per {
				fn := "Echo"
				if i%5 == 0 {
					fn = "Fail"
				}
				var err error
				switch (g + i) % 3 {
				case 0:
					_, err = sp.InvokeRaw(ctx, fn, []byte("x"))
				case 1:
					done := make(chan error, 1)
					if e := sp.AsyncInvokeRaw(ctx, fn, []byte("y"), func(_ []byte, err error) { done <- err }); e != nil {
						t.Errorf("async: %v", e)
						return
					}
					err = <-done
				case 2:
					_, err = sp.FutureInvokeRaw(ctx, fn, []byte("z")).Get(ctx)
				}
				made.Add(1)
				if err != nil {
					failed.Add(1)
				}
			}
		})
	}
	var stop atomic.Bool
	var scrapers sync.WaitGroup
	for range 2 {
		scrapers.Go(func() {
			var prev map[string]float64
			for n := 0; !stop.Load(); n++ {
				mfs, err := reg.Gather()
				if err != nil {
					t.Errorf("scrape %d: %v", n, err)
					return
				}
				cur := allCounters(mfs)
				if prev != nil {
					noneDown(t, fmt.Sprintf("scrape %d", n), prev, cur)
				}
				prev = cur
			}
		})
	}
	callers.Wait()
	stop.Store(true)
	scrapers.Wait()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	mf := byName(mfs)
	total := sum(mf, "tarscomm_client_calls_total", map[string]string{"servant": obsObj})
	ok := sum(mf, "tarscomm_client_calls_total", map[string]string{"servant": obsObj, "result": "ok"})
	serr := sum(mf, "tarscomm_client_calls_total", map[string]string{"servant": obsObj, "result": "server_error"})
	var hcount uint64
	for _, m := range mf["tarscomm_client_call_duration_seconds"].GetMetric() {
		hcount += m.GetHistogram().GetSampleCount()
	}
	if int64(total) != made.Load() || int64(serr) != failed.Load() || int64(ok) != made.Load()-failed.Load() || float64(hcount) != ok {
		t.Errorf("after quiescence: calls_total %v (ok %v, server_error %v), histogram count %d; callers made %d, %d failed",
			total, ok, serr, hcount, made.Load(), failed.Load())
	}
}

// TestMonotonicAcrossListUpdates: a servant's list goes A -> B -> A,B -> A with traffic
// between; every counter (calls, histograms, net threads, endpoints) that is in two consecutive
// scrapes never goes down.
func TestMonotonicAcrossListUpdates(t *testing.T) {
	_, a := obsServer(t, nil, map[string]server.HandlerFunc{"Echo": echo})
	_, b := obsServer(t, nil, map[string]server.HandlerFunc{"Echo": echo})
	cfg := conf.Default()
	cfg.NetThread = 2
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, src, first, reg := namedComm(t, ctx, cfg)
	var prev map[string]float64
	step := func(what string, addrs ...string) {
		src.set(t, addrs...)
		for i := range 20 {
			_, _ = sp.InvokeRaw(ctx, "Echo", []byte("x"))
			_ = sp.AsyncInvokeRaw(ctx, "Echo", []byte("y"), func([]byte, error) {})
			if i%5 == 0 {
				mfs, err := reg.Gather()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				cur := allCounters(mfs)
				if prev != nil {
					noneDown(t, what, prev, cur)
				}
				prev = cur
			}
		}
	}
	step("list A", a)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	step("list B", b)
	step("list A,B", a, b)
	step("list A", a)
	step("list B", b)
	step("list A,B", a, b)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	noneDown(t, "last", prev, allCounters(mfs))
	if !strings.Contains(fmt.Sprint(allCounters(mfs)), a) {
		t.Error("A's series are gone")
	}
}

// TestNoCounterDownAfterConcurrentScrapes: the doc promises that a snapshot missing a
// thread (one that did not answer in time) is not exposed, "so that no counter goes down": the
// last snapshot that held every thread is shown again. Two scrapers (an HA pair of Prometheus
// servers scraping one target) whose Collects interleave: A reads Stats (5 calls) and is
// preempted before it takes the collector's lock; more calls; B reads Stats (10 calls) and
// returns 10; A resumes. Before, A kept its older snapshot as "the last full one", and when the
// net thread then missed a scrape, B's Prometheus read 5: its counter went down from 10.
func TestNoCounterDownAfterConcurrentScrapes(t *testing.T) {
	_, addr := obsServer(t, nil, map[string]server.HandlerFunc{"Echo": echo})
	comm, sp := obsComm(t, conf.Default(), addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	calls := func(n int) {
		for range n {
			if _, err := sp.InvokeRaw(ctx, "Echo", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var gate, stalled atomic.Bool
	took, resume := make(chan struct{}), make(chan struct{})
	src := func() stats.Snapshot {
		s := comm.Stats()
		if stalled.Load() { // the net thread did not answer: Stats leaves its part out
			return stats.Snapshot{Taken: s.Taken}
		}
		if gate.CompareAndSwap(true, false) { // scraper A: preempted between Stats and the lock
			close(took)
			<-resume
		}
		return s
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(tarsprom.NewCollector(src, tarsprom.Options{}))
	ok := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		return sum(byName(mfs), "tarscomm_client_calls_total", map[string]string{"result": "ok"})
	}
	calls(5)
	gate.Store(true)
	aDone := make(chan float64, 1)
	go func() { aDone <- ok() }()
	<-took
	calls(5)
	b1 := ok()
	close(resume)
	a := <-aDone
	stalled.Store(true)
	b2 := ok()
	t.Logf("scraper A %v; scraper B %v, then with the thread stalled %v", a, b1, b2)
	if b1 != 10 {
		t.Fatalf("B's first scrape %v, want 10", b1)
	}
	if b2 < b1 {
		t.Errorf("calls_total{result=ok} went down from %v to %v between two scrapes (the second without the thread's part): "+
			"the collector kept an older snapshot as its last full one", b1, b2)
	}
}

// TestEndpointCountersAcrossLeaveWithoutCalls: with retries = 1, an endpoint D that
// refuses connections fails its dials (connect_failures_total{D} > 0) while every call is retried
// on the live endpoint L, so no call is counted under D. D leaves the list and comes back; in
// the next scrape its connect_failures_total, same labels, must not be below the last value.
func TestEndpointCountersAcrossLeaveWithoutCalls(t *testing.T) {
	_, live := obsServer(t, nil, map[string]server.HandlerFunc{"Echo": echo})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	cfg := conf.Default()
	cfg.Servants = map[string]conf.Servant{obsObj: {Retries: 1}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, src, first, reg := namedComm(t, ctx, cfg)
	epD := map[string]string{"servant": obsObj, "endpoint": dead}
	src.set(t, dead, live)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a dial to D to fail", func() bool {
		if _, err := sp.InvokeRaw(ctx, "Echo", []byte("x")); err != nil {
			t.Fatalf("call: %v (retries should take it to L)", err)
		}
		return sum(gatherMap(t, reg), "tarscomm_endpoint_connect_failures_total", epD) > 0
	})
	before := gatherMap(t, reg)
	fails := sum(before, "tarscomm_endpoint_connect_failures_total", epD)
	underD := sum(before, "tarscomm_client_calls_total", epD)
	t.Logf("before: connect_failures_total{D} %v, calls_total{D} %v", fails, underD)

	src.set(t, live)
	waitFor(t, "D to leave", func() bool {
		return len(matching(gatherMap(t, reg), "tarscomm_endpoint_connect_failures_total", epD)) == 0
	})
	src.set(t, dead, live)
	var after map[string]*dto.MetricFamily
	waitFor(t, "D to be listed again", func() bool {
		after = gatherMap(t, reg)
		return len(matching(after, "tarscomm_endpoint_connect_failures_total", epD)) > 0
	})
	if got := sum(after, "tarscomm_endpoint_connect_failures_total", epD); got < fails {
		t.Errorf("tarscomm_endpoint_connect_failures_total{servant,endpoint=D} went from %v to %v as D left and came back "+
			"(same labels: a counter reset); calls_total{D} was %v", fails, got, underD)
	}
}

// TestOnewayCounting: a one-way call that was sent is in no calls_total series (it has
// no outcome), and one that failed (its endpoint refuses connections) is counted.
func TestOnewayCounting(t *testing.T) {
	got := make(chan struct{}, 8)
	_, addr := obsServer(t, nil, map[string]server.HandlerFunc{"Note": func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		got <- struct{}{}
		return rsp, nil
	}})
	comm, sp := obsComm(t, conf.Default(), addr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	h, p, _ := net.SplitHostPort(dead)
	var deadSp servantproxy.ServantProxy
	if err := comm.StringToProxy(obsObj+"@tcp -h "+h+" -p "+p, &deadSp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		if err := sp.InvokeOnewayRaw(ctx, "Note", nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		<-got
	}
	deadErr := deadSp.InvokeOnewayRaw(ctx, "Note", nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	mf := gatherMap(t, reg)
	if n := sum(mf, "tarscomm_client_calls_total", map[string]string{"endpoint": addr}); n != 0 {
		t.Errorf("sent one-way calls counted in calls_total: %v", n)
	}
	// They are counted in their endpoint's sent calls, with no reply; its connection is up.
	ep := map[string]string{"servant": obsObj, "endpoint": addr}
	if n := sum(mf, "tarscomm_endpoint_sent_total", ep); n != 3 {
		t.Errorf("tarscomm_endpoint_sent_total = %v after 3 one-way calls, want 3", n)
	}
	if n := sum(mf, "tarscomm_endpoint_replies_total", ep) + sum(mf, "tarscomm_endpoint_late_replies_total", ep) +
		sum(mf, "tarscomm_endpoint_connection_losses_total", ep); n != 0 {
		t.Errorf("replies, late replies and connection losses of a one-way-only endpoint: %v, want 0", n)
	}
	if deadErr == nil {
		t.Fatal("a one-way call to a closed port succeeded")
	}
	if n := sum(mf, "tarscomm_client_calls_total", map[string]string{"function": "Note", "endpoint": dead}) +
		sum(mf, "tarscomm_client_calls_total", map[string]string{"function": "Note", "endpoint": ""}); n != 1 {
		t.Errorf("failed one-way call (%v) counted %v times, want 1", deadErr, n)
	}
}

// namedComm starts a Communicator of cfg whose naming source the test drives (src), a proxy to
// obsObj, and its first call (its error on first), which waits for src's first list; reg holds
// the Communicator's collector.
func namedComm(t *testing.T, ctx context.Context, cfg conf.Config) (sp *servantproxy.ServantProxy, src *pushSource, first <-chan error, reg *prometheus.Registry) {
	t.Helper()
	src = &pushSource{ready: make(chan struct{})}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	sp = new(servantproxy.ServantProxy)
	if err := comm.StringToProxy(obsObj, sp); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := sp.InvokeRaw(ctx, "Echo", []byte("x")); done <- err }()
	select {
	case <-src.ready:
	case <-time.After(liveBound):
		t.Fatal("the naming source was never asked")
	}
	reg = prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	return sp, src, done, reg
}
