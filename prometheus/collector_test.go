package tarsprom_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/stats"
)

func snapshot() stats.Snapshot {
	var r stats.Recorder
	ep := r.Endpoint("Hello.Server.GreeterObj", "127.0.0.1:18015")
	ep.Record("SayHello", stats.OK, 0, 300*time.Microsecond)
	ep.Record("SayHello", stats.OK, 0, 7*time.Millisecond)
	ep.Record("SayHello", stats.OK, 0, 4*time.Second)
	ep.Record("SayHello", stats.Timeout, 0, 0)
	ep.Record("SayHello", stats.ServerError, -3, 0)
	ep.Record("SayHello", stats.ServerError, -3, 0)
	s := r.Snapshot()
	s.Threads = []stats.NetThread{{Index: 0, QueueDepth: 4, Wakeups: 9, HandBacks: 6, BytesOut: 1000, LateReplies: 2}}
	s.Endpoints = []stats.Endpoint{{Servant: "Hello.Server.GreeterObj", Endpoint: "127.0.0.1:18015", State: stats.StateBackoff, Pending: 3, Active: false, Reconnects: 5}}
	return s
}

// scrape serves the collector on 127.0.0.1 and parses what a Prometheus server would read.
func scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(snapshot, tarsprom.Options{}))
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	if !strings.HasPrefix(rsp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("content type %q", rsp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mf, err := p.TextToMetricFamilies(rsp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mf
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

func find(t *testing.T, mf map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	f := mf[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range f.GetMetric() {
		l := labels(m)
		ok := true
		for k, v := range want {
			if l[k] != v {
				ok = false
			}
		}
		if ok {
			return m
		}
	}
	t.Fatalf("no %s with %v", name, want)
	return nil
}

func TestScrape(t *testing.T) {
	mf := scrape(t)
	call := map[string]string{"servant": "Hello.Server.GreeterObj", "function": "SayHello", "endpoint": "127.0.0.1:18015"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for a, b := range call {
			m[a] = b
		}
		return m
	}
	if v := find(t, mf, "tarscomm_client_calls_total", with("result", "ok")).GetCounter().GetValue(); v != 3 {
		t.Errorf("ok calls %v", v)
	}
	if v := find(t, mf, "tarscomm_client_calls_total", with("result", "timeout")).GetCounter().GetValue(); v != 1 {
		t.Errorf("timeouts %v", v)
	}
	if v := find(t, mf, "tarscomm_client_calls_total", with("result", "server_error")).GetCounter().GetValue(); v != 2 {
		t.Errorf("server errors %v", v)
	}
	if mf["tarscomm_client_calls_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("calls_total is not a counter")
	}
	if v := find(t, mf, "tarscomm_client_server_errors_total", with("code", "-3")).GetCounter().GetValue(); v != 2 {
		t.Errorf("code -3: %v", v)
	}
	h := find(t, mf, "tarscomm_client_call_duration_seconds", call).GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() < 4.007 || h.GetSampleSum() > 4.0074 {
		t.Errorf("histogram count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	cum := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	// 300µs <= 0.0005; 7ms <= 0.01; 4s above 3s.
	for ub, want := range map[float64]uint64{0.00025: 0, 0.0005: 1, 0.005: 1, 0.01: 2, 3: 2} {
		if cum[ub] != want {
			t.Errorf("bucket le=%v: %d, want %d", ub, cum[ub], want)
		}
	}
	if len(h.GetBucket()) != stats.NumBuckets { // the bounds and +Inf
		t.Errorf("%d buckets", len(h.GetBucket()))
	}
	if v := find(t, mf, "tarscomm_netthread_queue_depth", map[string]string{"thread": "0"}).GetGauge().GetValue(); v != 4 {
		t.Errorf("queue depth %v", v)
	}
	if v := find(t, mf, "tarscomm_netthread_hand_backs_total", map[string]string{"thread": "0"}).GetCounter().GetValue(); v != 6 {
		t.Errorf("hand-backs %v", v)
	}
	if v := find(t, mf, "tarscomm_netthread_late_replies_total", map[string]string{"thread": "0"}).GetCounter().GetValue(); v != 2 {
		t.Errorf("late %v", v)
	}
	epl := map[string]string{"servant": "Hello.Server.GreeterObj", "endpoint": "127.0.0.1:18015", "thread": "0"}
	if v := find(t, mf, "tarscomm_endpoint_active", epl).GetGauge().GetValue(); v != 0 {
		t.Errorf("active %v", v)
	}
	epl["state"] = "backoff"
	if v := find(t, mf, "tarscomm_endpoint_state", epl).GetGauge().GetValue(); v != 1 {
		t.Errorf("state %v", v)
	}
	delete(epl, "state")
	if v := find(t, mf, "tarscomm_endpoint_reconnects_total", epl).GetCounter().GetValue(); v != 5 {
		t.Errorf("reconnects %v", v)
	}
}
