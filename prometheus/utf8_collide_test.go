package tarsprom_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tarscomm/tarscomm/conf"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestScrapeTwoNonUTF8Functions: two raw calls whose function names are different
// invalid UTF-8 ("Echo\xff" and "Echo\xfe", as a gateway mapping request paths to InvokeRaw's fn
// gets them) are two (servant, function, endpoint) keys in Communicator.Stats. The collector
// mends each name to "Echo\uFFFD", and counts the two keys as one series now. Before, it sent
// both series with the same labels: the registry failed the whole scrape (promhttp's default
// HandlerOpts answer HTTP 500), so one client sending two odd paths blinded every metric of the
// process, though the package promises that a bad name is mended "rather than refused, which
// would ... fail it whole".
func TestScrapeTwoNonUTF8Functions(t *testing.T) {
	comm, target := liveComm(t, conf.Default(), startLive(t))
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(target, &sp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveBound)
	defer cancel()
	for _, fn := range []string{"Echo\xff", "Echo\xfe"} {
		_, err := sp.InvokeRaw(ctx, fn, []byte("x"))
		t.Logf("call %q: %v", fn, err)
	}
	keys := 0
	for _, c := range comm.Stats().Calls {
		if c.Servant == liveObj {
			keys++
		}
	}
	if keys != 2 {
		t.Fatalf("Stats has %d call keys for the servant, want 2 (one per function name)", keys)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	if _, err := reg.Gather(); err != nil {
		t.Errorf("Gather failed (the whole scrape is lost): %.400v", err)
	}
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(ts.Close)
	rsp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rsp.Body)
	rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		t.Errorf("scrape with the documented promhttp.HandlerOpts{}: %s, want 200 OK\n%.400s", rsp.Status, body)
	}
}
