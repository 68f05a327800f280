package tarsotel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const obsObj = "Obs.Span.TraceObj"

// objServer is a traced server of obsObj with the handlers hs.
func objServer(t *testing.T, o tarsotel.Options, hs map[string]server.HandlerFunc) string {
	t.Helper()
	return startServer(t, o, func(s *server.Server) {
		for fn, h := range hs {
			mustHandle(t, s, obsObj, fn, h)
		}
	})
}

// wideServer is a traced server with 16 workers whose "Get" is h.
func wideServer(t *testing.T, o tarsotel.Options, h server.HandlerFunc) string {
	t.Helper()
	return startServerWorkers(t, o, 16, func(s *server.Server) { mustHandle(t, s, obsObj, "Get", h) })
}

func echoBody(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
	return append(rsp, req...), nil
}

func failAlways(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
	return nil, &server.Error{Code: failCode, Desc: "failed on purpose"}
}

// tracedComm is a Communicator of cfg with the tracing interceptor; t.Cleanup closes it.
func tracedComm(t *testing.T, o tarsotel.Options, cfg conf.Config) *communicator.Communicator {
	t.Helper()
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithInterceptor(tarsotel.ClientInterceptor(o)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", c.Close) })
	return c
}

func spanProxy(t *testing.T, c *communicator.Communicator, addrs ...string) *servantproxy.ServantProxy {
	t.Helper()
	var eps []string
	for _, a := range addrs {
		h, p, _ := net.SplitHostPort(a)
		eps = append(eps, "tcp -h "+h+" -p "+p+" -t 60000")
	}
	var sp servantproxy.ServantProxy
	if err := c.StringToProxy(obsObj+"@"+strings.Join(eps, ":"), &sp); err != nil {
		t.Fatal(err)
	}
	return &sp
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// byKindName groups spans by "kind name".
func byKindName(spans tracetest.SpanStubs) map[string]tracetest.SpanStubs {
	m := map[string]tracetest.SpanStubs{}
	for _, s := range spans {
		k := s.SpanKind.String() + " " + s.Name
		m[k] = append(m[k], s)
	}
	return m
}

// TestSpanPerCallKind: one call of each kind (sync, async with a cancellable and with a
// background ctx, future, one-way; successes and server errors) through a traced Communicator to
// a traced project server. Per call: exactly one client span, ended by the time a sync call
// returns or an async callback runs; exactly one server span, its child in the same trace; kinds
// client/server; status Error exactly on the failed calls; the documented attributes.
func TestSpanPerCallKind(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	fns := map[string]bool{ // function -> fails
		"SyncOK": false, "SyncFail": true, "AsyncOK": false, "AsyncFail": true, "AsyncBgOK": false,
		"FutureOK": false, "FutureFail": true, "Oneway": false,
	}
	onewayDone := make(chan struct{}, 1)
	hs := map[string]server.HandlerFunc{}
	for fn, fails := range fns {
		switch {
		case fn == "Oneway":
			hs[fn] = func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
				onewayDone <- struct{}{}
				return rsp, nil
			}
		case fails:
			hs[fn] = failAlways
		default:
			hs[fn] = echoBody
		}
	}
	addr := objServer(t, o, hs)
	comm := tracedComm(t, o, conf.Default())
	sp := spanProxy(t, comm, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	clientEnded := func(fn string) bool {
		return len(byKindName(exp.GetSpans())["client "+obsObj+"/"+fn]) == 1
	}
	errs := map[string]error{}
	for _, fn := range []string{"SyncOK", "SyncFail"} {
		_, errs[fn] = sp.InvokeRaw(ctx, fn, []byte(fn))
		if !clientEnded(fn) {
			t.Errorf("%s: no client span ended when the sync call returned", fn)
		}
	}
	for _, fn := range []string{"AsyncOK", "AsyncFail", "AsyncBgOK"} {
		actx := context.Context(ctx)
		if fn == "AsyncBgOK" {
			actx = context.Background()
		}
		done := make(chan error, 1)
		if err := sp.AsyncInvokeRaw(actx, fn, []byte(fn), func(_ []byte, err error) {
			if !clientEnded(fn) {
				t.Errorf("%s: no client span ended when the callback ran", fn)
			}
			done <- err
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case errs[fn] = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no callback", fn)
		}
	}
	for _, fn := range []string{"FutureOK", "FutureFail"} {
		_, errs[fn] = sp.FutureInvokeRaw(ctx, fn, []byte(fn)).Get(ctx)
	}
	errs["Oneway"] = sp.InvokeOnewayRaw(ctx, "Oneway", []byte("o"))
	select {
	case <-onewayDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the one-way request never reached its handler")
	}
	for fn, fails := range fns {
		if (errs[fn] != nil) != fails {
			t.Fatalf("%s: err %v, want failure %v", fn, errs[fn], fails)
		}
	}

	spans := waitSpans(t, exp, 2*len(fns))
	by := byKindName(spans)
	port := portOf(addr)
	for fn, fails := range fns {
		cs, ss := by["client "+obsObj+"/"+fn], by["server "+obsObj+"/"+fn]
		if len(cs) != 1 || len(ss) != 1 {
			t.Errorf("%s: %d client spans, %d server spans, want 1 and 1", fn, len(cs), len(ss))
			continue
		}
		c, s := cs[0], ss[0]
		if c.SpanKind != trace.SpanKindClient || s.SpanKind != trace.SpanKindServer {
			t.Errorf("%s: kinds %v, %v", fn, c.SpanKind, s.SpanKind)
		}
		if s.SpanContext.TraceID() != c.SpanContext.TraceID() || s.Parent.SpanID() != c.SpanContext.SpanID() || !s.Parent.IsRemote() {
			t.Errorf("%s: server span trace %s parent %s (remote %v), want trace %s parent %s", fn,
				s.SpanContext.TraceID(), s.Parent.SpanID(), s.Parent.IsRemote(), c.SpanContext.TraceID(), c.SpanContext.SpanID())
		}
		if (c.Status.Code == codes.Error) != fails {
			t.Errorf("%s: client status %v, call failed %v", fn, c.Status, fails)
		}
		if (s.Status.Code == codes.Error) != fails {
			t.Errorf("%s: server status %v, call failed %v", fn, s.Status, fails)
		}
		ret := 0
		if fails {
			ret = failCode
		}
		checkAttrs(t, c, map[string]any{"rpc.system": "tars", "rpc.service": obsObj, "rpc.method": fn,
			"server.address": "127.0.0.1", "server.port": port, "tars.endpoint": addr, "tars.return_code": ret})
		checkAttrs(t, s, map[string]any{"rpc.system": "tars", "rpc.service": obsObj, "rpc.method": fn,
			"client.address": "127.0.0.1", "tars.return_code": ret})
	}
}

// TestBackupRequestOneSpan: an idempotent function with backup requests over two
// endpoints, A slow and B fast. Every call (sync, async, future) has one client span, whose
// endpoint is B's (the reply that won), status Unset; every request that reached a server
// (primaries and backups) has a server span that is the child of its call's client span.
func TestBackupRequestOneSpan(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	slowA := objServer(t, o, map[string]server.HandlerFunc{"Get": func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		time.Sleep(300 * time.Millisecond)
		return append(rsp, req...), nil
	}})
	fastB := objServer(t, o, map[string]server.HandlerFunc{"Get": echoBody})
	cfg := conf.Default()
	cfg.Servants = map[string]conf.Servant{obsObj: {BackupRequest: 20 * time.Millisecond, Idempotent: []string{"Get"}, BackupBudget: 1}}
	comm := tracedComm(t, o, cfg)
	sp := spanProxy(t, comm, slowA, fastB)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 6
	for i := range n {
		body := []byte(strconv.Itoa(i))
		var err error
		switch i % 3 {
		case 0:
			_, err = sp.InvokeRaw(ctx, "Get", body)
		case 1:
			done := make(chan error, 1)
			if e := sp.AsyncInvokeRaw(ctx, "Get", body, func(_ []byte, err error) { done <- err }); e != nil {
				t.Fatal(e)
			}
			err = <-done
		case 2:
			_, err = sp.FutureInvokeRaw(ctx, "Get", body).Get(ctx)
		}
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	bs := sp.BackupStats()
	t.Logf("backup stats %+v", bs)
	if bs.Sent == 0 {
		t.Fatal("no backup was sent: the test did not exercise backups")
	}
	spans := waitSpans(t, exp, 2*n+int(bs.Sent))
	clients := kindOnly(spans, trace.SpanKindClient)
	servers := kindOnly(spans, trace.SpanKindServer)
	if len(clients) != n {
		t.Errorf("%d client spans for %d calls", len(clients), n)
	}
	ids := map[trace.SpanID]tracetest.SpanStub{}
	for _, c := range clients {
		ids[c.SpanContext.SpanID()] = c
		if c.Status.Code == codes.Error {
			t.Errorf("client span %s status %v on a call that succeeded", c.Name, c.Status)
		}
		checkAttrs(t, c, map[string]any{"server.port": portOf(fastB), "tars.endpoint": fastB, "tars.return_code": 0})
	}
	perCall := map[trace.SpanID]int{}
	for _, s := range servers {
		c, ok := ids[s.Parent.SpanID()]
		if !ok || c.SpanContext.TraceID() != s.SpanContext.TraceID() {
			t.Errorf("server span %s: parent %s is no client span of the calls", s.Name, s.Parent.SpanID())
		}
		perCall[s.Parent.SpanID()]++
	}
	if len(servers) != n+int(bs.Sent) {
		t.Errorf("%d server spans, want %d (calls + backups)", len(servers), n+int(bs.Sent))
	}
}

// TestRetryOneSpan: retries = 1 over a dead endpoint and a live one: each call that
// first went to the dead one is retried on the live one. One client span per call, status
// Unset, naming the endpoint that answered; one server span per call, its child.
func TestRetryOneSpan(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	live := objServer(t, o, map[string]server.HandlerFunc{"Echo": echoBody})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	cfg := conf.Default()
	cfg.Servants = map[string]conf.Servant{obsObj: {Retries: 1}}
	comm := tracedComm(t, o, cfg)
	sp := spanProxy(t, comm, dead, live)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 6
	for i := range n {
		var err error
		if i%2 == 0 {
			_, err = sp.InvokeRaw(ctx, "Echo", []byte("x"))
		} else {
			_, err = sp.FutureInvokeRaw(ctx, "Echo", []byte("y")).Get(ctx)
		}
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	spans := waitSpans(t, exp, 2*n)
	clients := kindOnly(spans, trace.SpanKindClient)
	ids := map[trace.SpanID]bool{}
	for _, c := range clients {
		ids[c.SpanContext.SpanID()] = true
		if c.Status.Code == codes.Error {
			t.Errorf("client span status %v on a call that succeeded", c.Status)
		}
		checkAttrs(t, c, map[string]any{"server.port": portOf(live), "tars.endpoint": live})
	}
	if len(clients) != n {
		t.Errorf("%d client spans for %d calls", len(clients), n)
	}
	for _, s := range kindOnly(spans, trace.SpanKindServer) {
		if !ids[s.Parent.SpanID()] {
			t.Errorf("server span parent %s is no client span", s.Parent.SpanID())
		}
	}
}

// TestBackupInFlightCancelAndClose: calls with backups in flight to two endpoints that
// both block end by ctx cancellation or by Close; each call's client span ends exactly once,
// with status Error.
func TestBackupInFlightCancelAndClose(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	entered := make(chan struct{}, 64)
	block := func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return rsp, nil
	}
	a := wideServer(t, o, block)
	b := wideServer(t, o, block)
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // runs before the servers stop
	cfg := conf.Default()
	cfg.SyncInvokeTimeout, cfg.AsyncInvokeTimeout = 25*time.Second, 25*time.Second
	cfg.Servants = map[string]conf.Servant{obsObj: {BackupRequest: 10 * time.Millisecond, Idempotent: []string{"Get"}, BackupBudget: 1}}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithInterceptor(tarsotel.ClientInterceptor(o)))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = comm.Close()
		}
	})
	sp := spanProxy(t, comm, a, b)
	long, cancelLong := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelLong()
	results := make(chan string, 16)
	var wg sync.WaitGroup
	cctx, ccancel := context.WithCancel(long)
	wg.Go(func() { _, err := sp.InvokeRaw(cctx, "Get", nil); results <- fmt.Sprint("sync cancel: ", err) })
	if err := sp.AsyncInvokeRaw(cctx, "Get", nil, func(_ []byte, err error) { results <- fmt.Sprint("async cancel: ", err) }); err != nil {
		t.Fatal(err)
	}
	f1 := sp.FutureInvokeRaw(cctx, "Get", nil)
	wg.Go(func() { _, err := sp.InvokeRaw(long, "Get", nil); results <- fmt.Sprint("sync close: ", err) })
	if err := sp.AsyncInvokeRaw(long, "Get", nil, func(_ []byte, err error) { results <- fmt.Sprint("async close: ", err) }); err != nil {
		t.Fatal(err)
	}
	f2 := sp.FutureInvokeRaw(long, "Get", nil)
	const calls = 6
	for i := range 2 * calls { // each call's primary and backup
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d requests (primaries and backups) reached a server; backups %+v", i, 2*calls, sp.BackupStats())
		}
	}
	ccancel()
	_, e1 := f1.Get(long)
	for range 2 {
		select {
		case r := <-results:
			t.Log(r)
		case <-time.After(5 * time.Second):
			t.Fatal("a cancelled call did not end")
		}
	}
	if err := comm.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	_, e2 := f2.Get(long)
	t.Logf("future cancel: %v; future close: %v", e1, e2)
	wg.Wait()
	for range 2 {
		select {
		case r := <-results:
			t.Log(r)
		case <-time.After(5 * time.Second):
			t.Fatal("a call did not end after Close")
		}
	}
	clients := kindOnly(spansWithin(exp, 100), trace.SpanKindClient)
	if len(clients) != calls {
		t.Errorf("%d client spans for %d calls", len(clients), calls)
	}
	for _, c := range clients {
		if c.Status.Code != codes.Error {
			t.Errorf("client span status %v for a call that failed", c.Status)
		}
	}
}

// TestTimeoutSpansNameEndpoint: calls that time out at a server that does not answer
// (sync, async with a background and with a cancellable ctx, future) were sent to an endpoint:
// their client spans carry it (server.address, server.port, tars.endpoint: "the endpoint the
// call went to") and status Error.
func TestTimeoutSpansNameEndpoint(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{}, 16)
	addr := wideServer(t, o, func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return rsp, nil
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	comm := tracedComm(t, o, conf.Default())
	sp := spanProxy(t, comm, addr)
	long, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	to := servantproxy.WithTimeout(150 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	wg.Go(func() { _, err := sp.InvokeRaw(long, "Get", nil, to); errs <- fmt.Sprint("sync: ", err) })
	for _, c := range []context.Context{context.Background(), long} {
		if err := sp.AsyncInvokeRaw(c, "Get", nil, func(_ []byte, err error) { errs <- fmt.Sprint("async: ", err) }, to); err != nil {
			t.Fatal(err)
		}
	}
	wg.Go(func() {
		_, err := sp.FutureInvokeRaw(long, "Get", nil, to).Get(long)
		errs <- fmt.Sprint("future: ", err)
	})
	const calls = 4
	for range calls {
		select {
		case e := <-errs:
			t.Log(e)
		case <-time.After(10 * time.Second):
			t.Fatal("a call did not time out")
		}
	}
	wg.Wait()
	clients := kindOnly(spansWithin(exp, calls), trace.SpanKindClient)
	if len(clients) != calls {
		t.Fatalf("%d client spans for %d calls", len(clients), calls)
	}
	for _, c := range clients {
		if c.Status.Code != codes.Error {
			t.Errorf("timed-out call's span status %v", c.Status)
		}
		checkAttrs(t, c, map[string]any{"server.address": "127.0.0.1", "server.port": portOf(addr), "tars.endpoint": addr})
	}
	once.Do(func() { close(release) })
}

// TestUnsampledCarriesContext: a client whose sampler samples nothing still carries
// the trace context on (W3C traceparent with flags 00 and the TARS trace key), and the server
// span (ParentBased sampling) is not recorded; the call succeeds.
func TestUnsampledCarriesContext(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	seenCh := make(chan seen, 1)
	addr := objServer(t, o, map[string]server.HandlerFunc{"Echo": func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		record(ctx, cur, seenCh)
		return append(rsp, req...), nil
	}})
	cexp := tracetest.NewInMemoryExporter()
	ctp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(cexp), sdktrace.WithSampler(sdktrace.NeverSample()))
	defer func() { _ = ctp.Shutdown(context.Background()) }()
	comm := tracedComm(t, tarsotel.Options{TracerProvider: ctp}, conf.Default())
	sp := spanProxy(t, comm, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := sp.InvokeRaw(ctx, "Echo", []byte("x")); err != nil {
		t.Fatal(err)
	}
	s := <-seenCh
	tp := s.context["traceparent"]
	if !strings.HasPrefix(tp, "00-") || !strings.HasSuffix(tp, "-00") {
		t.Errorf("traceparent %q, want an unsampled one", tp)
	}
	if s.messageType&tarsotel.MessageTrace == 0 || s.status[tarsotel.TraceStatusKey] == "" {
		t.Errorf("no TARS trace key: type %#x status %v", s.messageType, s.status)
	}
	if s.handlerSpan.TraceID().String() != strings.Split(tp, "-")[1] {
		t.Errorf("handler's trace %s, traceparent %q", s.handlerSpan.TraceID(), tp)
	}
	if n := len(cexp.GetSpans()) + len(spansWithin(exp, 1)); n != 0 {
		t.Errorf("%d spans recorded for an unsampled trace", n)
	}
}

// TestCancelRaceEndsOnce: many calls (async, future, sync, one-way) whose ctx is
// cancelled before the call or right after it starts, racing its reply: every call's
// interceptor End runs exactly once and its client span is exported once; callbacks run once.
func TestCancelRaceEndsOnce(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	addr := wideServer(t, o, echoBody)
	ec := &endCounter{ends: map[string]int{}, errs: map[string]error{}}
	comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)),
		communicator.WithInterceptor(tarsotel.ClientInterceptor(o), ec.icpt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	sp := spanProxy(t, comm, addr)
	const n = 200
	var cbs sync.Map
	var wg sync.WaitGroup
	made := 0
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		if i%4 == 0 {
			cancel() // before the call
		}
		switch i % 3 {
		case 0:
			wg.Add(1)
			if err := sp.AsyncInvokeRaw(ctx, "Get", []byte("a"), func([]byte, error) {
				v, _ := cbs.LoadOrStore(i, new(int))
				*(v.(*int))++
				wg.Done()
			}); err != nil {
				wg.Done()
			}
		case 1:
			f := sp.FutureInvokeRaw(ctx, "Get", []byte("f"))
			cancel()
			_, _ = f.Get(context.Background())
		case 2:
			wg.Go(func() { _, _ = sp.InvokeRaw(ctx, "Get", []byte("s")) })
		}
		made++
		cancel()
	}
	// One-way calls too.
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 0 {
			cancel()
		}
		_ = sp.InvokeOnewayRaw(ctx, "Get", nil)
		cancel()
		made++
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("calls did not end")
	}
	cbs.Range(func(k, v any) bool {
		if *(v.(*int)) != 1 {
			t.Errorf("call %v: callback ran %d times", k, *(v.(*int)))
		}
		return true
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		ec.mu.Lock()
		ends := ec.ends["Get"]
		ec.mu.Unlock()
		clients := len(kindOnly(exp.GetSpans(), trace.SpanKindClient))
		if (ends >= made && clients >= made) || time.Now().After(deadline) {
			time.Sleep(50 * time.Millisecond)
			ec.mu.Lock()
			ends = ec.ends["Get"]
			ec.mu.Unlock()
			clients = len(kindOnly(exp.GetSpans(), trace.SpanKindClient))
			if ends != made || clients != made {
				t.Errorf("%d calls: End ran %d times, %d client spans exported", made, ends, clients)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRefusedUnsentSpans: calls refused unsent by max-inflight (sync, async: AsyncInvoke
// returns the error and no callback runs, future) each end one client span with status Error and
// no server attributes (no endpoint was chosen); the call in flight ends its own span once.
func TestRefusedUnsentSpans(t *testing.T) {
	exp, o, stop := setup()
	defer stop()
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{}, 4)
	addr := wideServer(t, o, func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return rsp, nil
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	cfg := conf.Default()
	cfg.Servants = map[string]conf.Servant{obsObj: {MaxInflight: 1}}
	comm := tracedComm(t, o, cfg)
	sp := spanProxy(t, comm, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, err := sp.InvokeRaw(ctx, "Get", nil); first <- err }()
	<-entered
	if _, err := sp.InvokeRaw(ctx, "Get", nil); !errors.Is(err, communicator.ErrOverload) {
		t.Errorf("sync: %v, want ErrOverload", err)
	}
	if err := sp.AsyncInvokeRaw(ctx, "Get", nil, func([]byte, error) { t.Error("callback of a refused async call") }); !errors.Is(err, communicator.ErrOverload) {
		t.Errorf("async: %v, want ErrOverload", err)
	}
	if _, err := sp.FutureInvokeRaw(ctx, "Get", nil).Get(ctx); !errors.Is(err, communicator.ErrOverload) {
		t.Errorf("future: %v, want ErrOverload", err)
	}
	refused := kindOnly(spansWithin(exp, 3), trace.SpanKindClient)
	if len(refused) != 3 {
		t.Fatalf("%d client spans for 3 refused calls", len(refused))
	}
	for _, c := range refused {
		if c.Status.Code != codes.Error {
			t.Errorf("refused call's span status %v", c.Status)
		}
		if a := attrs(c); a["server.address"].AsString() != "" || a["tars.endpoint"].AsString() != "" {
			t.Errorf("refused call's span names an endpoint: %v", a)
		}
	}
	once.Do(func() { close(release) })
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := len(kindOnly(spansWithin(exp, 5), trace.SpanKindClient)); n != 4 {
		t.Errorf("%d client spans for 4 calls", n)
	}
}
