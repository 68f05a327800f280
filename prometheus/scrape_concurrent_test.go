package tarsprom_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tarscomm/tarscomm/conf"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// seriesKey names one sample: family and sorted labels.
func seriesKey(name string, m *dto.Metric) string {
	var l []string
	for _, p := range m.GetLabel() {
		l = append(l, p.GetName()+"="+p.GetValue())
	}
	sort.Strings(l)
	return name + "{" + strings.Join(l, ",") + "}"
}

// checkFamilies checks the conventions of one gathering: counters end in _total, histograms
// have cumulative buckets in seconds below a count, and each latency histogram counts exactly
// the successes of its (servant, function, endpoint). It returns every counter's value.
func checkFamilies(t *testing.T, mfs []*dto.MetricFamily) map[string]float64 {
	t.Helper()
	counters := map[string]float64{}
	ok := map[string]float64{}
	hist := map[string]uint64{}
	for _, mf := range mfs {
		name := mf.GetName()
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			if !strings.HasSuffix(name, "_total") {
				t.Errorf("counter %s does not end in _total", name)
			}
			for _, m := range mf.GetMetric() {
				counters[seriesKey(name, m)] = m.GetCounter().GetValue()
				if name == "tarscomm_client_calls_total" && labels(m)["result"] == "ok" {
					l := labels(m)
					ok[l["servant"]+"|"+l["function"]+"|"+l["endpoint"]] = m.GetCounter().GetValue()
				}
			}
		case dto.MetricType_HISTOGRAM:
			if !strings.HasSuffix(name, "_seconds") {
				t.Errorf("histogram %s is not in seconds", name)
			}
			for _, m := range mf.GetMetric() {
				h := m.GetHistogram()
				var prev uint64
				var prevUB float64
				for i, b := range h.GetBucket() {
					if b.GetCumulativeCount() < prev || (i > 0 && b.GetUpperBound() <= prevUB) {
						t.Errorf("%s: bucket %d (le %v) %d after %d: not cumulative", seriesKey(name, m), i, b.GetUpperBound(), b.GetCumulativeCount(), prev)
					}
					prev, prevUB = b.GetCumulativeCount(), b.GetUpperBound()
				}
				if prev > h.GetSampleCount() {
					t.Errorf("%s: last bucket %d above the count %d", seriesKey(name, m), prev, h.GetSampleCount())
				}
				l := labels(m)
				hist[l["servant"]+"|"+l["function"]+"|"+l["endpoint"]] = h.GetSampleCount()
				counters[seriesKey(name+"_count", m)] = float64(h.GetSampleCount())
				counters[seriesKey(name+"_sum", m)] = h.GetSampleSum()
			}
		}
	}
	for k, n := range hist {
		if float64(n) != ok[k] {
			t.Errorf("%s: histogram _count %d, calls_total{result=ok} %v in the same scrape", k, n, ok[k])
		}
	}
	return counters
}

// TestScrapeDuringTrafficAndClose (a guard, passed when written): scrapes run concurrently with calls of every
// outcome and with Communicator.Close (and after it). No scrape fails or panics; in every scrape
// the families follow Prometheus's conventions; while the Communicator is open no counter ever
// goes down from one scrape to the next.
func TestScrapeDuringTrafficAndClose(t *testing.T) {
	addr := startLive(t)
	cfg := conf.Default()
	cfg.NetThread = 3
	comm, target := liveComm(t, cfg, addr)
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(target, &sp); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stopTraffic atomic.Bool
	var traffic sync.WaitGroup
	for g := range 4 {
		traffic.Go(func() {
			for i := 0; !stopTraffic.Load(); i++ {
				switch i % 4 {
				case 0, 1:
					_, _ = sp.InvokeRaw(ctx, "Echo", []byte("x"))
				case 2:
					_, _ = sp.InvokeRaw(ctx, "Fail", nil)
				case 3:
					if g == 0 {
						_, _ = sp.InvokeRaw(ctx, "Block", nil, servantproxy.WithTimeout(20*time.Millisecond))
					} else {
						done := make(chan struct{})
						_ = sp.AsyncInvokeRaw(ctx, "Echo", []byte("y"), func([]byte, error) { close(done) })
						select {
						case <-done:
						case <-time.After(5 * time.Second):
						}
					}
				}
			}
		})
	}
	var closedNow atomic.Bool
	var scrapers sync.WaitGroup
	var stopScrape atomic.Bool
	for range 2 {
		scrapers.Go(func() {
			var prev map[string]float64
			for n := 0; !stopScrape.Load(); n++ {
				wasClosed := closedNow.Load()
				mfs, err := reg.Gather()
				if err != nil {
					t.Errorf("scrape %d (closed %v): %.300v", n, wasClosed, err)
					return
				}
				cur := checkFamilies(t, mfs)
				// Only scrapes that ended before Close began are compared: Stats leaves the
				// threads out once they close (documented).
				if wasClosed = wasClosed || closedNow.Load(); prev != nil && !wasClosed {
					for k, v := range cur {
						if pv, ok := prev[k]; ok && v < pv {
							t.Errorf("scrape %d: %s went down from %v to %v while the Communicator was open", n, k, pv, v)
						}
					}
				}
				if !wasClosed {
					prev = cur
				}
			}
		})
	}
	time.Sleep(700 * time.Millisecond)
	closeErr := make(chan error, 1)
	closedNow.Store(true) // from here a scrape may see the threads leave
	go func() { closeErr <- comm.Close() }()
	stopTraffic.Store(true)
	select {
	case err := <-closeErr:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while scrapes ran")
	}
	traffic.Wait()
	time.Sleep(100 * time.Millisecond) // scrapes after Close
	stopScrape.Store(true)
	scrapers.Wait()
}
