package communicator_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestStatsCountCalls makes successes, server errors, timeouts and no-endpoint calls over two net
// threads and checks that Stats counts each under its (servant, function, endpoint) and result,
// with latencies, and that the net threads and endpoints are described.
func TestStatsCountCalls(t *testing.T) {
	ep := startFaultEP(t, "a")
	// The naming source has no endpoint for Bare.Server.Obj: its call is a no-endpoint call.
	comm := newCommWith(t, func(c *conf.Config) { c.NetThread = 2; c.TimeoutCheckInterval = tick },
		communicator.WithNaming(naming.Static{}))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	const oks = 20
	for i := range oks {
		if _, err := sayHello(ctx, sp, "s", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	var se *communicator.ServerError
	if _, err := sp.InvokeRaw(ctx, "NoSuchFunction", nil); !errors.As(err, &se) {
		t.Fatalf("unknown function: err = %v, want a ServerError", err)
	}
	ep.p.BlackHole(faultproxy.Both)
	if _, err := sayHello(ctx, sp, "t", 1, servantproxy.WithTimeout(50*time.Millisecond)); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("black-holed call: %v, want ErrTimeout", err)
	}
	_ = ep.p.Pass()
	bare, err := comm.Proxy("Bare.Server.Obj")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.InvokeRaw(ctx, "lookup", nil); !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Fatalf("no endpoint: %v", err)
	}

	s := comm.Stats()
	addr := ep.p.Addr()
	get := func(fn, endpoint string) stats.Counters {
		var sum stats.Counters
		for _, c := range s.Calls {
			if c.Function == fn && c.Endpoint == endpoint {
				for r := range c.Results {
					sum.Results[r] += c.Results[r]
				}
				sum.Codes = append(sum.Codes, c.Codes...)
				sum.Latency.Add(&c.Latency)
			}
		}
		return sum
	}
	hello := get("SayHello", addr)
	if got := hello.Results[stats.OK]; got != oks {
		t.Errorf("SayHello successes on %s: %d, want %d (calls %+v)", addr, got, oks, s.Calls)
	}
	if got := hello.Results[stats.Timeout]; got != 1 {
		t.Errorf("SayHello timeouts: %d, want 1", got)
	}
	if n, mean := hello.Latency.Count(), hello.Latency.Mean(); n != oks || mean <= 0 || mean > time.Second {
		t.Errorf("latency histogram: %d samples, mean %v", n, mean)
	}
	nf := get("NoSuchFunction", addr)
	if nf.Results[stats.ServerError] != 1 || len(nf.Codes) != 1 || nf.Codes[0].Code == 0 {
		t.Errorf("server error not counted by code: %+v", nf)
	}
	if got := get("lookup", "").Results[stats.NoEndpoint]; got != 1 {
		t.Errorf("no-endpoint calls: %d, want 1", got)
	}
	if len(s.Threads) != 2 {
		t.Fatalf("%d net threads in the snapshot, want 2", len(s.Threads))
	}
	var requests uint64
	for _, th := range s.Threads {
		requests += th.Requests
	}
	if requests < oks+2 {
		t.Errorf("net threads took %d requests, want at least %d", requests, oks+2)
	}
	found := false
	for _, e := range s.Endpoints {
		if e.Endpoint == addr && e.Replies > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("endpoint %s not described with its replies: %+v", addr, s.Endpoints)
	}
}

// TestDebugHandlerServesStats mounts the debug page and reads its JSON and HTML over HTTP. The
// servant has a table that sets retries only: the configuration shown gives its other keys the
// values in force (the communicator's timeouts, backup-budget's default), not zeros.
func TestDebugHandlerServesStats(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) { c.Servants = map[string]conf.Servant{servant: {Retries: 1}} })
	sp := proxyTo(t, comm, g)
	if _, err := sayHello(testCtx(t), sp, "x", 1); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(comm.DebugHandler())
	defer srv.Close()
	get := func(path string) string {
		rsp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer rsp.Body.Close()
		b, err := io.ReadAll(rsp.Body)
		if err != nil || rsp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, rsp.StatusCode, err)
		}
		return string(b)
	}
	js := get("/?format=json")
	var v struct {
		Config []struct{ Key, Value string } `json:"config"`
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	shown := map[string]string{}
	for _, s := range v.Config {
		shown[s.Key] = s.Value
	}
	for k, want := range map[string]string{"retries": "1", "backup-budget": "0.1", "sync-invoke-timeout": "3s", "load-balance": `"roundrobin"`} {
		if got := shown[`servant."`+servant+`".`+k]; got != want {
			t.Errorf("config shows servant.%q.%s = %q, want %q", servant, k, got, want)
		}
	}
	if !strings.Contains(js, `"SayHello"`) || !strings.Contains(js, g.addr) {
		t.Fatalf("JSON snapshot does not show the call and its endpoint %s: %s", g.addr, js)
	}
	page := get("/")
	if !strings.Contains(page, "SayHello") || !strings.Contains(page, g.addr) {
		t.Fatalf("HTML page does not show the call and its endpoint %s", g.addr)
	}
	_, list, _ := strings.Cut(page, `id="balancers"`)
	names, _ := objectproxy.Balancers()
	for _, n := range names {
		if !strings.Contains(list, "<td class=\"l\">"+n+"</td>") {
			t.Errorf("the page's balancer list does not show %q", n)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestStatsTwoProxiesOfOneObject: two proxy strings of one object (the second with a #tag, which
// gets a proxy of its own) to one endpoint give one Stats().Endpoints entry, which counts the
// calls of both, and Delta over an interval counts the interval's calls. There were two entries
// with the same (Thread, Servant, Endpoint), which Delta matched by that key: it subtracted the
// wrong entry's counters.
func TestStatsTwoProxiesOfOneObject(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1 })
	a := proxyTo(t, comm, g)
	var b servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"#b@"+g.endpoint(), &b); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	call := func(sp *servantproxy.ServantProxy, n int) {
		for i := range n {
			if _, err := sayHello(ctx, sp, "x", uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	replies := func(s stats.Snapshot) (n uint64, entries int) {
		for _, e := range s.Endpoints {
			if e.Servant == servant {
				n += e.Replies
				entries++
			}
		}
		return n, entries
	}
	call(a, 5)
	call(&b, 1)
	waitFor(t, "6 replies counted", func() bool { n, _ := replies(comm.Stats()); return n == 6 })
	prev := comm.Stats()
	call(a, 3)
	waitFor(t, "9 replies counted", func() bool { n, _ := replies(comm.Stats()); return n == 9 })
	cur := comm.Stats()
	_, entries := replies(cur)
	if entries != 1 {
		t.Errorf("%d endpoint entries for %s at one endpoint, want 1", entries, servant)
	}
	d := cur.Delta(prev)
	if n, _ := replies(d); n != 3 {
		t.Errorf("Delta has %d replies over %d endpoint entries of %s, want 3 (the interval's calls)\nprev %+v\ncur  %+v",
			n, entries, servant, prev.Endpoints, cur.Endpoints)
	}
}

// TestStatsThreadCountersSurviveEndpointRemoval: a net thread's Writes, BytesOut, BytesIn are
// cumulative counters (Prometheus *_total, Delta subtracts them): when an endpoint leaves the
// naming list they keep its counts. They were summed over the AdapterProxies the thread had at
// the time, so they went down, and the next Delta reported the whole count again.
func TestStatsThreadCountersSurviveEndpointRemoval(t *testing.T) {
	a, b := startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{})
	path := filepath.Join(t.TempDir(), "naming.txt")
	writeNaming(t, path, a, b)
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1; c.NamingFile = path })
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	seen := map[string]bool{}
	waitFor(t, "calls reach a and b", func() bool {
		from, err := sayHello(ctx, sp, "x", 1)
		if err != nil {
			t.Fatal(err)
		}
		seen[from] = true
		return seen["a"] && seen["b"]
	})
	before := comm.Stats()
	writeNaming(t, path, a)
	waitFor(t, "b leaves the Communicator's endpoints", func() bool {
		for _, e := range comm.Stats().Endpoints {
			if e.Endpoint == b.addr {
				return false
			}
		}
		return true
	})
	after := comm.Stats()
	if len(before.Threads) != 1 || len(after.Threads) != 1 {
		t.Fatalf("threads %d, %d", len(before.Threads), len(after.Threads))
	}
	bt, at := before.Threads[0], after.Threads[0]
	if at.Writes < bt.Writes || at.BytesOut < bt.BytesOut || at.BytesIn < bt.BytesIn {
		t.Errorf("net thread counters went down when b left the list: writes %d -> %d, bytes out %d -> %d, bytes in %d -> %d",
			bt.Writes, at.Writes, bt.BytesOut, at.BytesOut, bt.BytesIn, at.BytesIn)
	}
	if d := after.Delta(before).Threads[0]; d.BytesOut != 0 {
		t.Errorf("Delta over an interval with no call reports %d bytes out (the whole counter)", d.BytesOut)
	}
}
