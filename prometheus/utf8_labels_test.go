package tarsprom_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tarscomm/tarscomm/conf"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestScrapeNonUTF8Function: a raw call whose function name is not valid UTF-8 (a gateway that
// maps a request path such as "/api/Obj/%FF" to InvokeRaw's fn; the server answers -3 and the
// call is counted) is scraped with the name mended (U+FFFD), and the scrape succeeds. The
// Collector used to hand the name to prometheus.MustNewConstMetric, which panicked on it; in a
// real scrape Collect runs on a goroutine of the registry's Gather, with no recover: one bad
// name killed the process at its next scrape.
func TestScrapeNonUTF8Function(t *testing.T) {
	comm, target := liveComm(t, conf.Default(), startLive(t))
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(target, &sp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveBound)
	defer cancel()
	_, err := sp.InvokeRaw(ctx, "Echo\xff", []byte("x"))
	t.Logf("call with a non-UTF-8 function name: %v", err)

	c := tarsprom.NewCollector(comm.Stats, tarsprom.Options{})
	ch := make(chan prometheus.Metric, 1024)
	panicked := func() (p any) {
		defer func() { p = recover() }()
		c.Collect(ch)
		return nil
	}()
	if panicked != nil {
		t.Fatalf("Collect panicked (inside Registry.Gather this goroutine is not recovered: the process dies): %v", panicked)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	found := false
	for _, mf := range mfs {
		found = found || strings.Contains(mf.String(), "Echo\uFFFD")
	}
	if !found {
		t.Errorf("no series with the mended function name %q", "Echo\uFFFD")
	}
}
