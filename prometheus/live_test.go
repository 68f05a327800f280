package tarsprom_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// liveBound bounds the waits of the live tests: a liveness bound, far above what they take.
const liveBound = 10 * time.Second

const (
	liveObj  = "Test.Prom.EchoObj"
	liveCode = -1234 // what "Fail" answers
)

// startLive starts a project server on loopback: "Echo" answers its request, "Fail" answers
// liveCode, "Block" waits until the test ends (or the server stops). t.Cleanup stops it.
func startLive(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	s := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1), server.WithWorkers(16))
	handlers := map[string]server.HandlerFunc{
		"Echo": func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		},
		"Fail": func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			return nil, &server.Error{Code: liveCode, Desc: "failed on purpose"}
		},
		"Block": func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			// Blocks past its client's deadline (not ctx's, which ends at it): the calls time out.
			<-release
			return rsp, nil
		},
	}
	for fn, h := range handlers {
		if err := s.Handle(liveObj, fn, h); err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	return a.String()
}

// scrapeURL reads url as a Prometheus server would and parses the text format.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", rsp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mf, err := p.TextToMetricFamilies(rsp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mf
}

// matching returns the metrics of family name whose labels include want.
func matching(mf map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mf[name].GetMetric() {
		l := labels(m)
		ok := true
		for k, v := range want {
			ok = ok && l[k] == v
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// sum adds the counter or gauge values of the matching metrics.
func sum(mf map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var s float64
	for _, m := range matching(mf, name, want) {
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}

// series is one sample a test expects: its family, the labels it has (among others) and its
// value.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// scrapeSettled scrapes url until the sums of the series matching want equal their values, for
// at most liveBound, and returns the last scrape.
func scrapeSettled(t *testing.T, url string, want []series) map[string]*dto.MetricFamily {
	t.Helper()
	for deadline := time.Now().Add(liveBound); ; time.Sleep(20 * time.Millisecond) {
		mf := scrapeURL(t, url)
		settled := true
		for _, w := range want {
			settled = settled && sum(mf, w.name, w.labels) == w.value
		}
		if settled || time.Now().After(deadline) {
			return mf
		}
	}
}

// TestLiveScrape makes real calls through a Communicator to a project server over loopback
// (successes, server errors, timeouts against a handler that blocks), serves the collector over
// comm.Stats from a registry on 127.0.0.1, scrapes it and checks that the counters equal the
// calls made and the latency histogram counts the successes only.
func TestLiveScrape(t *testing.T) {
	const nOK, nErr, nTimeout = 25, 4, 3
	const callTimeout = 150 * time.Millisecond

	addr := startLive(t)
	cfg := conf.Default()
	cfg.NetThread = 2 // the snapshot merges the threads' counters
	comm, target := liveComm(t, cfg, addr)
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(target, &sp); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	t.Cleanup(ts.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range nOK {
		body := []byte("hello " + strconv.Itoa(i))
		got, err := sp.InvokeRaw(ctx, "Echo", body)
		if err != nil || string(got) != string(body) {
			t.Fatalf("Echo %d: %q, %v", i, got, err)
		}
	}
	for i := range nErr {
		var se *communicator.ServerError
		if _, err := sp.InvokeRaw(ctx, "Fail", nil); !errors.As(err, &se) || se.Code != liveCode {
			t.Fatalf("Fail %d: %v, want a ServerError %d", i, err, liveCode)
		}
	}
	for i := range nTimeout {
		if _, err := sp.InvokeRaw(ctx, "Block", nil, servantproxy.WithTimeout(callTimeout)); !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("Block %d: %v, want a timeout", i, err)
		}
	}

	call := func(fn string, kv ...string) map[string]string {
		m := map[string]string{"servant": liveObj, "function": fn, "endpoint": addr}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	want := []series{
		{"tarscomm_client_calls_total", call("Echo", "result", "ok"), nOK},
		{"tarscomm_client_calls_total", call("Echo"), nOK}, // no other result
		{"tarscomm_client_calls_total", call("Fail", "result", "server_error"), nErr},
		{"tarscomm_client_calls_total", call("Fail"), nErr},
		{"tarscomm_client_server_errors_total", call("Fail", "code", strconv.Itoa(liveCode)), nErr},
		{"tarscomm_client_calls_total", call("Block", "result", "timeout"), nTimeout},
		{"tarscomm_client_calls_total", call("Block"), nTimeout},
		{"tarscomm_client_calls_total", map[string]string{"servant": liveObj}, nOK + nErr + nTimeout},
		{"tarscomm_endpoint_timeouts_total", map[string]string{"servant": liveObj, "endpoint": addr}, nTimeout},
	}
	// A call's counters are merged from the loop that ended it: read until they settle.
	mf := scrapeSettled(t, ts.URL, want)
	for _, w := range want {
		if got := sum(mf, w.name, w.labels); got != w.value {
			t.Errorf("%s %v = %v, want %v", w.name, w.labels, got, w.value)
		}
	}
	if mf["tarscomm_client_calls_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("tarscomm_client_calls_total is not a counter")
	}

	hs := matching(mf, "tarscomm_client_call_duration_seconds", call("Echo"))
	if len(hs) != 1 {
		t.Fatalf("%d latency histograms of Echo, want 1", len(hs))
	}
	h := hs[0].GetHistogram()
	if h.GetSampleCount() != nOK {
		t.Errorf("histogram count %d, want %d (the successes)", h.GetSampleCount(), nOK)
	}
	// Loopback calls take well under a second each, and more than nothing.
	if s := h.GetSampleSum(); s <= 0 || s > float64(nOK) {
		t.Errorf("histogram sum %vs for %d loopback calls", s, nOK)
	}
	if b := h.GetBucket(); len(b) == 0 || b[len(b)-1].GetCumulativeCount() > nOK {
		t.Errorf("histogram buckets %v", b)
	}
	for _, fn := range []string{"Fail", "Block"} {
		for _, m := range matching(mf, "tarscomm_client_call_duration_seconds", call(fn)) {
			if n := m.GetHistogram().GetSampleCount(); n != 0 {
				t.Errorf("%s: histogram counts %d samples, want 0 (it holds successes only)", fn, n)
			}
		}
	}

	ep := map[string]string{"servant": liveObj, "endpoint": addr}
	if n := sum(mf, "tarscomm_endpoint_state", map[string]string{"servant": liveObj, "endpoint": addr, "state": "connected"}); n < 1 {
		t.Errorf("no net thread has the endpoint connected: %v", matching(mf, "tarscomm_endpoint_state", ep))
	}
	if n := sum(mf, "tarscomm_netthread_requests_total", nil); n < nOK+nErr+nTimeout {
		t.Errorf("net threads took %v requests, want at least %d", n, nOK+nErr+nTimeout)
	}
	if n := sum(mf, "tarscomm_netthread_sent_bytes_total", nil); n <= 0 {
		t.Errorf("net threads sent %v bytes", n)
	}
	if n := len(mf["tarscomm_netthread_queue_depth"].GetMetric()); n != cfg.NetThread {
		t.Errorf("%d net threads scraped, want %d", n, cfg.NetThread)
	}
}

// liveComm returns a Communicator with cfg, closed when the test ends, and the proxy string of
// liveObj on the live server at addr.
func liveComm(t *testing.T, cfg conf.Config, addr string) (*communicator.Communicator, string) {
	t.Helper()
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	host, port, _ := net.SplitHostPort(addr)
	return comm, fmt.Sprintf("%s@tcp -h %s -p %s", liveObj, host, port)
}
