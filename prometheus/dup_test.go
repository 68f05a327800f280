package tarsprom_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tarscomm/tarscomm/conf"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestTwoProxiesOfOneObjectScrape: another proxy string for the same object (a #tag, other
// endpoints) gets a proxy of its own. Two such proxies to one endpoint make one endpoint series:
// they used to make two stats.Endpoint entries with the same (servant, endpoint, thread), the
// collector sent the series twice with the same labels, and the registry failed the whole
// scrape (HTTP 500).
func TestTwoProxiesOfOneObjectScrape(t *testing.T) {
	comm, target := liveComm(t, conf.Default(), startLive(t))
	var a, b servantproxy.ServantProxy
	if err := comm.StringToProxy(target, &a); err != nil {
		t.Fatal(err)
	}
	if err := comm.StringToProxy(strings.Replace(target, "@", "#b@", 1), &b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, sp := range []*servantproxy.ServantProxy{&a, &b} {
		if _, err := sp.InvokeRaw(ctx, "Echo", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	t.Cleanup(ts.Close)
	rsp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rsp.Body)
	rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		t.Errorf("scrape: %s\n%.600s", rsp.Status, body)
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("Gather: %.600v", err)
	}
}
