package communicator_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// chromium runs Debian's chromium headless with args and the flags that let it run here (as
// root, with no network but loopback), and returns its standard output.
func chromium(t *testing.T, ctx context.Context, bin string, args ...string) string {
	t.Helper()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// domRow returns the <tr> of the table with id table whose attributes include attrs (the
// rendered DOM keeps the template's attribute order), or "" if there is none.
func domRow(dom, table string, attrs ...string) string {
	start := strings.Index(dom, `<table id="`+table+`"`)
	if start < 0 {
		return ""
	}
	end := strings.Index(dom[start:], "</table>")
	if end < 0 {
		return ""
	}
	for _, row := range strings.Split(dom[start:start+end], "<tr")[1:] {
		head, _, _ := strings.Cut(row, ">")
		ok := true
		for _, a := range attrs {
			ok = ok && strings.Contains(head, a)
		}
		if ok {
			return "<tr" + row
		}
	}
	return ""
}

// cell returns the text of the <td> of row whose class list starts with class.
func cell(row, class string) string {
	m := regexp.MustCompile(`<td class="` + regexp.QuoteMeta(class) + `[^"]*">(.*?)</td>`).FindStringSubmatch(row)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestDebugPageLiveInChromium runs a Communicator with live traffic to two endpoints of the
// test servant, one stalled behind a fault proxy, mounts its DebugHandler on 127.0.0.1 and loads
// it in headless Chromium while the traffic goes on. The rendered DOM must show what a person
// looks for: both endpoints, the stalled one's timeouts and its inactive health, the healthy
// one's successes and the function's latency (quantiles and a chart). The screenshot replaces
// debugpage/testdata/live.png when DEBUGPAGE_SCREENSHOT=1.
func TestDebugPageLiveInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	// The stalled endpoint's calls must time out and the healthy one's never: with 100ms, a busy
	// machine (Chromium starting on the same two cores) timed out 27 healthy calls in CI, three in
	// a row took the healthy endpoint out. A second is far above a loopback call however busy the
	// machine, and three stalled calls still time out within a few seconds.
	const callTimeout = time.Second
	good, stalled := startFaultEP(t, "good"), startFaultEP(t, "stalled")
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.Health = conf.Health{ // three timeouts in a row take an endpoint out; no probe for a minute
			MinTimeoutInvoke: 1000, CheckTimeoutInterval: time.Minute, TimeoutRatio: 1,
			FrequentFailInvoke: 3, MinFrequentFailTime: 0, TryInterval: time.Minute, MaxConnectFail: 1,
		}
	}))
	sp := proxyToEPs(t, comm, good, stalled)
	for i := range 8 { // both endpoints connected and answering
		if _, err := sayHello(testCtx(t), sp, "warm", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}

	stalled.p.Stall(faultproxy.Both)
	stopLoad := startLoad(t, sp, 4, servantproxy.WithTimeout(callTimeout))
	var once sync.Once
	var load loadResult
	stop := func() loadResult { once.Do(func() { load = stopLoad() }); return load }
	t.Cleanup(func() { stop() })

	endpoint := func(s stats.Snapshot, addr string) (stats.Endpoint, bool) {
		for _, e := range s.Endpoints {
			if e.Endpoint == addr {
				return e, true
			}
		}
		return stats.Endpoint{}, false
	}
	eventually(t, 10*time.Second, "the stalled endpoint taken out of rotation", func() bool {
		e, ok := endpoint(comm.Stats(), stalled.p.Addr())
		return ok && !e.Active && e.Timeouts >= 3
	})
	eventually(t, 10*time.Second, "the healthy endpoint answering under load", func() bool {
		e, ok := endpoint(comm.Stats(), good.p.Addr())
		return ok && e.Active && e.Replies >= 100
	})

	ts := httptest.NewServer(comm.DebugHandler()) // on 127.0.0.1; the traffic goes on
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom := chromium(t, ctx, bin, "--dump-dom", ts.URL+"/")

	goodRow := domRow(dom, "endpoints", `data-endpoint="`+good.p.Addr()+`"`)
	badRow := domRow(dom, "endpoints", `data-endpoint="`+stalled.p.Addr()+`"`)
	if goodRow == "" || badRow == "" {
		t.Fatalf("the endpoints table lacks an endpoint (good %q, stalled %q):\n%s", good.p.Addr(), stalled.p.Addr(), dom)
	}
	if !strings.Contains(goodRow, `class="active"`) || cell(goodRow, "l health") != `<span class="ok">active</span>` {
		t.Errorf("healthy endpoint's row: %s", goodRow)
	}
	if !strings.Contains(badRow, `class="inactive"`) || cell(badRow, "l health") != `<span class="down">inactive</span>` {
		t.Errorf("stalled endpoint's row does not show it inactive: %s", badRow)
	}
	if n, _ := strconv.Atoi(cell(badRow, "timeouts")); n < 3 {
		t.Errorf("stalled endpoint's row shows %q timeouts, want at least 3: %s", cell(badRow, "timeouts"), badRow)
	}
	if n, _ := strconv.Atoi(cell(badRow, "replies")); n > 8 {
		t.Errorf("stalled endpoint's row shows %d replies, want only the warm-up's", n)
	}
	if n, _ := strconv.Atoi(cell(goodRow, "replies")); n < 100 {
		t.Errorf("healthy endpoint's row shows %q replies, want at least 100", cell(goodRow, "replies"))
	}

	goodCalls := domRow(dom, "calls", `data-function="SayHello"`, `data-endpoint="`+good.p.Addr()+`"`)
	badCalls := domRow(dom, "calls", `data-function="SayHello"`, `data-endpoint="`+stalled.p.Addr()+`"`)
	if !regexp.MustCompile(`ok=\d{3,}`).MatchString(cell(goodCalls, "l results")) {
		t.Errorf("SayHello on the healthy endpoint: results %q, want ok= at least 100", cell(goodCalls, "l results"))
	}
	if !regexp.MustCompile(`timeout=\d+`).MatchString(cell(badCalls, "l results")) {
		t.Errorf("SayHello on the stalled endpoint: results %q, want timeouts", cell(badCalls, "l results"))
	}
	p50, err := strconv.ParseFloat(cell(goodCalls, "p50"), 64)
	if err != nil || p50 <= 0 || p50 > float64(callTimeout/time.Millisecond) {
		t.Errorf("SayHello's p50 on the healthy endpoint is %q ms, want a loopback latency", cell(goodCalls, "p50"))
	}
	chart := `<div class="chart" data-function="SayHello" data-endpoint="` + good.p.Addr() + `">`
	i := strings.Index(dom, chart)
	if i < 0 || !strings.Contains(dom[i:], `aria-label="latency histogram of SayHello"`) {
		t.Errorf("no latency chart of SayHello on the healthy endpoint")
	} else if svg := dom[i:min(len(dom), i+strings.Index(dom[i:], "</svg>")+1)]; !regexp.MustCompile(`<rect [^>]*height="[1-9]`).MatchString(svg) {
		t.Errorf("the latency chart of SayHello draws no bar: %s", svg)
	}
	if !strings.Contains(dom, `id="total-inactive" class="bad">1<`) {
		t.Error("the summary does not count one inactive endpoint")
	}

	shot := filepath.Join(t.TempDir(), "live.png")
	if os.Getenv("DEBUGPAGE_SCREENSHOT") == "1" {
		shot, _ = filepath.Abs(filepath.Join("..", "debugpage", "testdata", "live.png"))
	}
	chromium(t, ctx, bin, "--window-size=1280,2000", "--screenshot="+shot, ts.URL+"/")
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 10000 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot of %d bytes is not a PNG of a page", len(png))
	}
	res := stop()
	t.Logf("screenshot: %s (%d bytes); load while the page was taken: replies %v, errors %v", shot, len(png), res.from, res.errs)
	if res.from["good"] < 100 {
		t.Errorf("the healthy endpoint answered %d calls, want many", res.from["good"])
	}
	if n := len(res.errs) - min(res.errs["timeout"], 1); n != 0 {
		t.Errorf("errors other than timeouts: %v", res.errs)
	}
}
