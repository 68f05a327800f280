package debugpage_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/debugpage"
	"github.com/tarscomm/tarscomm/stats"
)

// snapshot is what a communicator with two endpoints, one of them stalled, would show: the
// calls counted by a real Recorder, the thread and endpoint parts as the loop fills them.
func snapshot() stats.Snapshot {
	var r stats.Recorder
	good := r.Endpoint("Hello.Server.GreeterObj", "127.0.0.1:18015")
	stalled := r.Endpoint("Hello.Server.GreeterObj", "127.0.0.1:18016")
	for i := range 500 {
		good.Record("SayHello", stats.OK, 0, time.Duration(200+i*7)*time.Microsecond)
	}
	good.Record("SayHello", stats.ServerError, -3, time.Millisecond)
	for range 20 {
		stalled.Record("SayHello", stats.Timeout, 0, 3*time.Second)
	}
	s := r.Snapshot()
	s.Threads = []stats.NetThread{{Index: 0, QueueDepth: 2, QueueCap: 100000, Connections: 2, Wakeups: 321, HandBacks: 17, Batches: 300, Requests: 521, Direct: 9, Writes: 480, BytesOut: 40960, BytesIn: 30720, LateReplies: 3}}
	s.Endpoints = []stats.Endpoint{
		{Servant: "Hello.Server.GreeterObj", Endpoint: "127.0.0.1:18015", State: stats.StateConnected, Active: true, Sent: 501, Replies: 501, WindowCalls: 40},
		{Servant: "Hello.Server.GreeterObj", Endpoint: "127.0.0.1:18016", State: stats.StateConnected, Active: false, Pending: 20, Sent: 20, Timeouts: 20, WindowCalls: 20, WindowFailures: 20, Deactivated: 1},
	}
	return s
}

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	h := debugpage.Handler(snapshot, debugpage.Options{Title: "test client", Config: conf.Default()})
	ts := httptest.NewServer(h) // on 127.0.0.1
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (string, string) {
	t.Helper()
	rsp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if rsp.StatusCode != 200 {
		t.Fatalf("%s: %s: %s", url, rsp.Status, b)
	}
	return string(b), rsp.Header.Get("Content-Type")
}

func TestJSON(t *testing.T) {
	ts := serve(t)
	for _, url := range []string{ts.URL + "/?format=json", ts.URL + "/stats.json"} {
		body, ct := get(t, url)
		if ct != "application/json" {
			t.Errorf("content type %q", ct)
		}
		var v debugpage.View
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if v.Totals.Calls != 521 || v.Totals.Successes != 500 || v.Totals.Failures != 21 || v.Totals.Inactive != 1 {
			t.Errorf("totals %+v", v.Totals)
		}
		if len(v.Calls) != 2 || v.Calls[0].Results["ok"] != 500 || v.Calls[0].Results["server_error"] != 1 || v.Calls[1].Results["timeout"] != 20 {
			t.Errorf("calls %+v", v.Calls)
		}
		if v.Calls[0].P50Ms < 1 || v.Calls[0].P50Ms > 3 || len(v.Calls[0].Buckets) != stats.NumBuckets {
			t.Errorf("p50 %v ms, %d buckets", v.Calls[0].P50Ms, len(v.Calls[0].Buckets))
		}
		if len(v.Endpoints) != 2 || v.Endpoints[1].State != stats.StateConnected || v.Endpoints[1].Active {
			t.Errorf("endpoints %+v", v.Endpoints)
		}
		if !strings.Contains(body, `"key": "sync-invoke-timeout",
      "value": "3s"`) {
			t.Error("no configuration, by its file's keys, in the JSON")
		}
		var raw any
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			t.Fatal(err)
		}
		if bad := notSnake(raw, nil); len(bad) > 0 {
			t.Errorf("JSON keys not in snake_case: %v", bad)
		}
		if !strings.Contains(body, `"queue_depth": 2`) || !strings.Contains(body, `"state": "connected"`) {
			t.Error("the JSON lacks the net thread's queue_depth or an endpoint's state by name")
		}
	}
}

// TestJSONEmpty: the JSON of a Communicator that has made no call has empty lists, not null.
func TestJSONEmpty(t *testing.T) {
	h := debugpage.Handler(func() stats.Snapshot { return stats.Snapshot{} }, debugpage.Options{})
	ts := httptest.NewServer(h) // on 127.0.0.1
	t.Cleanup(ts.Close)
	body, _ := get(t, ts.URL+"/stats.json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"threads", "endpoints", "calls"} {
		if l, ok := raw[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%q = %#v, want []", k, raw[k])
		}
	}
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// notSnake appends to bad the object keys of v, at any depth, that are not snake_case.
func notSnake(v any, bad []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !snakeKey.MatchString(k) {
				bad = append(bad, k)
			}
			bad = notSnake(e, bad)
		}
	case []any:
		for _, e := range v {
			bad = notSnake(e, bad)
		}
	}
	return bad
}

func TestHTML(t *testing.T) {
	ts := serve(t)
	body, ct := get(t, ts.URL+"/")
	if !strings.HasPrefix(ct, "text/html") {
		t.Errorf("content type %q", ct)
	}
	for _, s := range []string{"<svg", "test client", `class="inactive" data-endpoint="127.0.0.1:18016"`, "-3×1", "timeout=20",
		// the configuration by its file's keys, durations as durations
		"<td class=\"l\">sync-invoke-timeout</td><td class=\"l\">3s</td>", "health.try-interval",
		// the net thread's counts, hand-backs and direct requests among them
		"<td>321</td><td>17</td><td>300</td><td>521</td><td>9</td>"} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(body, "http://") && !strings.Contains(body, `xmlns="http://www.w3.org/2000/svg"`) || strings.Contains(body, "<script") || strings.Contains(body, "https://") {
		t.Error("the page refers to the internet or runs a script")
	}
}

// chromiumArgs are the flags that let Debian's chromium run headless here, as root, on a
// machine with no network but loopback.
func chromiumArgs(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile}
}

// TestInChromium loads the page in a real browser and checks what a person would see: the DOM
// after rendering, and a screenshot, which replaces testdata/debugpage.png when
// DEBUGPAGE_SCREENSHOT=1 (so that an ordinary run leaves the tree clean).
func TestInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	ts := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cmd := exec.CommandContext(ctx, bin, append(chromiumArgs(t.TempDir()), "--dump-dom", ts.URL+"/")...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	for _, s := range []string{
		`id="total-calls">521<`,
		`id="total-inactive" class="bad">1<`,
		`<span class="down">inactive</span>`,
		`aria-label="latency histogram of SayHello"`,
		"Hello.Server.GreeterObj",
		"127.0.0.1:18016",
		`id="config"`,
		`<td class="rate">100%</td>`,
	} {
		if !strings.Contains(dom, s) {
			t.Errorf("rendered DOM lacks %q", s)
		}
	}
	if n := strings.Count(dom, "<rect "); n != stats.NumBuckets {
		t.Errorf("%d bars drawn, want %d (one chart of %d buckets)", n, stats.NumBuckets, stats.NumBuckets)
	}

	shot := filepath.Join(t.TempDir(), "debugpage.png")
	if os.Getenv("DEBUGPAGE_SCREENSHOT") == "1" {
		shot, _ = filepath.Abs(filepath.Join("testdata", "debugpage.png"))
	}
	cmd = exec.CommandContext(ctx, bin, append(chromiumArgs(t.TempDir()), "--window-size=1400,1000", "--screenshot="+shot, ts.URL+"/")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 10000 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot of %d bytes is not a PNG of a page", len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}

// TestTotalsCountEndpointsOnce: an endpoint appears once per net thread in the endpoint rows
// (each thread has its own connection and health), but the totals count it once, and as
// inactive when any thread keeps it out of rotation. Before, two threads doubled both counts.
func TestTotalsCountEndpointsOnce(t *testing.T) {
	s := snapshot()
	var eps []stats.Endpoint
	for th := range 2 {
		for _, e := range s.Endpoints {
			e.Thread = th
			e.Active = e.Active || th == 1 // the stalled one is out on thread 0 only
			eps = append(eps, e)
		}
	}
	s.Endpoints = eps
	ts := httptest.NewServer(debugpage.Handler(func() stats.Snapshot { return s }, debugpage.Options{}))
	t.Cleanup(ts.Close)
	body, _ := get(t, ts.URL+"/stats.json")
	var v debugpage.View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Endpoints) != 4 {
		t.Fatalf("%d endpoint rows, want 4 (two endpoints on two threads)", len(v.Endpoints))
	}
	if v.Totals.Endpoints != 2 || v.Totals.Inactive != 1 {
		t.Fatalf("totals: %d endpoints, %d inactive; want 2 and 1", v.Totals.Endpoints, v.Totals.Inactive)
	}
}
