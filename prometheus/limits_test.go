package tarsprom_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/server"
)

// limitSeries returns the series of a LimitsCollector in namespace ns over st, each with the
// labels extra (the const labels) besides its own.
func limitSeries(ns string, st server.LimitStats, extra map[string]string) []series {
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range extra {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	return []series{
		{ns + "_server_connections_refused_total", with(), float64(st.Refused)},
		{ns + "_server_connections_closed_total", with("reason", "idle"), float64(st.Idle)},
		{ns + "_server_connections_closed_total", with("reason", "slow"), float64(st.Slow)},
		{ns + "_server_connections_closed_total", with("reason", "backlog"), float64(st.Backlog)},
		{ns + "_server_requests_grown_total", with(), float64(st.Grown)},
		{ns + "_server_queue_timeouts_total", with(), float64(st.QueueTimeout)},
		{ns + "_server_queue_full_total", with(), float64(st.QueueFull)},
	}
}

// checkSeries checks that the families of mf named with prefix hold exactly the series of want,
// with exactly their labels: every family a counter with help text, no series missing and none
// more.
func checkSeries(t *testing.T, mf map[string]*dto.MetricFamily, prefix string, want []series) {
	t.Helper()
	key := func(name string, l map[string]string) string {
		kv := []string{name}
		for k, v := range l {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv[1:])
		return strings.Join(kv, ",")
	}
	left := map[string]float64{}
	for _, w := range want {
		left[key(w.name, w.labels)] = w.value
	}
	for _, f := range mf {
		if !strings.HasPrefix(f.GetName(), prefix) {
			continue
		}
		if f.GetType() != dto.MetricType_COUNTER {
			t.Errorf("%s is a %v, want a counter", f.GetName(), f.GetType())
		}
		if f.GetHelp() == "" {
			t.Errorf("%s has no help", f.GetName())
		}
		for _, m := range f.GetMetric() {
			k := key(f.GetName(), labels(m))
			v, ok := left[k]
			switch {
			case !ok:
				t.Errorf("unexpected series %s = %v", k, m.GetCounter().GetValue())
			case m.GetCounter().GetValue() != v:
				t.Errorf("%s = %v, want %v", k, m.GetCounter().GetValue(), v)
			}
			delete(left, k)
		}
	}
	for k := range left {
		t.Errorf("no series %s", k)
	}
}

// TestLimitsCollector reads a fixed LimitStats, with the default namespace and another, and
// checks every metric's name, labels, type and value; and that the collector shares a registry
// with a server-side call stats Collector.
func TestLimitsCollector(t *testing.T) {
	st := server.LimitStats{Refused: 1, Idle: 2, Slow: 3, Backlog: 4, Grown: 5, QueueTimeout: 6, QueueFull: 7}
	src := func() server.LimitStats { return st }
	for _, tc := range []struct {
		name string
		o    tarsprom.Options
		ns   string
	}{
		{"default", tarsprom.Options{}, "tarscomm"},
		// Side does not apply: the subsystem stays "server".
		{"namespace", tarsprom.Options{Namespace: "app", Side: "client", ConstLabels: prometheus.Labels{"obj": "Test.Prom"}}, "app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(tarsprom.NewLimitsCollector(src, tc.o))
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			if len(mfs) != 5 {
				t.Errorf("%d families, want 5", len(mfs))
			}
			checkSeries(t, byName(mfs), tc.ns+"_", limitSeries(tc.ns, st, tc.o.ConstLabels))
		})
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewLimitsCollector(src, tarsprom.Options{}),
		tarsprom.NewCollector(snapshot, tarsprom.Options{Side: "server"}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	mf := byName(mfs)
	checkSeries(t, mf, "tarscomm_server_connections_", limitSeries("tarscomm", st, nil)[:4])
	if find(t, mf, "tarscomm_server_calls_total", map[string]string{"result": "ok"}).GetCounter().GetValue() != 3 {
		t.Error("the call stats Collector's series are not there beside the limits'")
	}
}

// byName indexes families by name.
func byName(mfs []*dto.MetricFamily) map[string]*dto.MetricFamily {
	m := make(map[string]*dto.MetricFamily, len(mfs))
	for _, f := range mfs {
		m[f.GetName()] = f
	}
	return m
}

// rawConn is a plain TCP connection to a project server, speaking TARS frames.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	fr *codec.FrameReader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, liveBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c, fr: codec.NewFrameReader(c, 0)}
}

func (r *rawConn) write(b []byte) {
	r.t.Helper()
	if err := r.c.SetWriteDeadline(time.Now().Add(liveBound)); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// next reads the next frame, or the error that ends the connection.
func (r *rawConn) next() ([]byte, error) {
	if err := r.c.SetReadDeadline(time.Now().Add(liveBound)); err != nil {
		return nil, err
	}
	return r.fr.Next()
}

// recv reads and decodes the next response.
func (r *rawConn) recv() *codec.ResponsePacket {
	r.t.Helper()
	f, err := r.next()
	if err != nil {
		r.t.Fatalf("read a response: %v", err)
	}
	rsp := new(codec.ResponsePacket)
	if err := codec.DecodeResponse(f, rsp); err != nil {
		r.t.Fatalf("decode a response: %v", err)
	}
	return rsp
}

// expectClosed checks that the server closes the connection without sending anything more.
func (r *rawConn) expectClosed(what string) {
	r.t.Helper()
	f, err := r.next()
	if err == nil {
		r.t.Fatalf("%s: a frame of %d bytes, want the connection closed", what, len(f))
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "connection reset") {
		r.t.Fatalf("%s: %v, want the connection closed (EOF or reset)", what, err)
	}
}

// limitsRequest returns a normal request of liveObj's fn.
func limitsRequest(id int32, fn string, body []byte) []byte {
	return codec.AppendRequest(nil, &codec.RequestPacket{Version: codec.VersionTars, PacketType: codec.PacketNormal,
		RequestID: id, ServantName: liveObj, FuncName: fn, Buffer: body, Timeout: 60000})
}

// waitFor polls cond until it holds, failing the test after liveBound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(liveBound); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, liveBound)
		}
	}
}

// TestLiveLimits drives a project server's limits over loopback TCP and scrapes a
// LimitsCollector over it: with WithMaxConns(1) a first connection, kept busy by a handler that
// blocks (so that no idle close can come first), makes the server refuse a second; on the first,
// a large request sent in two parts is received into a growing buffer (WithFrameBudget(1) has no
// room for it); once both are answered and the connection sends nothing more, WithIdleTimeout
// closes it. The counters must then read exactly 1 refusal, 1 idle close, 1 grown request and
// nothing else.
func TestLiveLimits(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	s := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1), server.WithWorkers(2),
		server.WithMaxConns(1), server.WithIdleTimeout(time.Second), server.WithFrameBudget(1))
	block := func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return append(rsp, req...), nil
	}
	echo := func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	}
	for fn, h := range map[string]server.HandlerFunc{"Block": block, "Echo": echo} {
		if err := s.Handle(liveObj, fn, h); err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		ctx, cancel := context.WithTimeout(context.Background(), liveBound)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	addr := a.String()

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewLimitsCollector(s.LimitStats, tarsprom.Options{}))
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	t.Cleanup(ts.Close)

	first := dialRaw(t, addr)
	first.write(limitsRequest(1, "Block", []byte("held")))
	select {
	case <-started:
	case <-time.After(liveBound):
		t.Fatalf("Block did not start within %v", liveBound)
	}
	// first is open and busy: the server is at WithMaxConns.
	dialRaw(t, addr).expectClosed("a connection beyond WithMaxConns(1)")

	body := bytes.Repeat([]byte("large "), 128<<10/6)
	big := limitsRequest(2, "Echo", body)
	first.write(big[:1024]) // its header: the budget has no room for its length
	waitFor(t, "LimitStats().Grown = 1", func() bool { return s.LimitStats().Grown == 1 })
	first.write(big[1024:])
	close(release)
	released = true
	for range 2 {
		rsp := first.recv()
		want, ok := map[int32][]byte{1: []byte("held"), 2: body}[rsp.RequestID]
		if !ok || rsp.Ret != codec.RetOK || !bytes.Equal(rsp.Buffer, want) {
			t.Fatalf("reply %d: ret %d, %d bytes", rsp.RequestID, rsp.Ret, len(rsp.Buffer))
		}
	}
	// first now sends nothing and has nothing in flight.
	first.expectClosed("an idle connection")

	want := limitSeries("tarscomm", server.LimitStats{Refused: 1, Idle: 1, Grown: 1}, nil)
	// The counts are in before the closes show; read until they settle all the same.
	checkSeries(t, scrapeSettled(t, ts.URL, want), "tarscomm_", want)
}
