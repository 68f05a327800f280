package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// statSink is a StatF servant that adds up the client reports it receives from this process,
// by function.
type statSink struct {
	mu      sync.Mutex
	reports int // ReportMicMsg calls received
	got     map[string]statf.StatMicMsgBody
	hd      map[string]statf.StatMicMsgHead
	bodies  map[string][]statf.StatMicMsgBody // each report's body, by function, in order
}

func (s *statSink) ReportMicMsg(_ context.Context, cur *server.Current, msg map[statf.StatMicMsgHead]statf.StatMicMsgBody, fromClient bool) (int32, error) {
	if !ownCaller(cur) {
		return 0, nil // another process's reporter: not this test's calls
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reports++
	for h, b := range msg {
		if !fromClient {
			continue
		}
		sum := s.got[h.InterfaceName]
		sum.Count += b.Count
		sum.TimeoutCount += b.TimeoutCount
		sum.ExecCount += b.ExecCount
		s.got[h.InterfaceName] = sum
		s.hd[h.InterfaceName] = h
		s.bodies[h.InterfaceName] = append(s.bodies[h.InterfaceName], b)
	}
	return 0, nil
}

func (s *statSink) ReportSampleMsg(context.Context, *server.Current, []statf.StatSampleMsg) (int32, error) {
	return 0, nil
}

// startStatSink serves a statSink as tars.tarsstat.StatObj on 127.0.0.1 and returns it and the
// proxy string reaching it; t.Cleanup stops the server.
func startStatSink(t *testing.T) (*statSink, string) {
	t.Helper()
	sink, addr := serveStatSink(t)
	return sink, statServant + "@" + tcpEndpoint(addr)
}

// serveStatSink is startStatSink returning the server's host:port.
func serveStatSink(t *testing.T) (*statSink, string) {
	t.Helper()
	sink := &statSink{got: map[string]statf.StatMicMsgBody{}, hd: map[string]statf.StatMicMsgHead{}, bodies: map[string][]statf.StatMicMsgBody{}}
	srv := server.New()
	if err := statf.RegisterStatF(srv, statServant, sink); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "stat server", srv) })
	return sink, addr.String()
}

const statServant = "tars.tarsstat.StatObj"

// TestStatReportsLeftOutOfStats makes calls through a Communicator that reports to a StatF
// servant and has a client interceptor, and checks that the reporter's own calls show nowhere:
// the second report (sent after the first report's call completed) carries the user's call
// only, Stats lists no call or endpoint of the stat servant, and the interceptor saw none.
func TestStatReportsLeftOutOfStats(t *testing.T) {
	sink, statProxy := startStatSink(t)
	ep := startFaultEP(t, "a")
	cfg := conf.Default()
	cfg.Stat = statProxy
	cfg.ModuleName = "Test.Client"
	cfg.ReportInterval = time.Second
	var mu sync.Mutex
	seen := map[string]int{}
	count := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		mu.Lock()
		seen[info.Servant]++
		mu.Unlock()
		return next(ctx, info)
	}
	comm, err := communicator.New(cfg, communicator.WithInterceptor(count))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	reports := func() int {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return sink.reports
	}
	if _, err := sayHello(ctx, sp, "x", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first report", func() bool { return reports() >= 1 })
	if _, err := sayHello(ctx, sp, "x", 2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second report", func() bool { return reports() >= 2 })

	sink.mu.Lock()
	for fn, b := range sink.got {
		if fn != "SayHello" {
			t.Errorf("reported %s %+v: only SayHello was called by the user", fn, b)
		}
	}
	if n := sink.got["SayHello"].Count; n != 2 {
		t.Errorf("reported %d SayHello calls, want 2", n)
	}
	sink.mu.Unlock()
	s := comm.Stats()
	for _, c := range s.Calls {
		if c.Servant != servant {
			t.Errorf("Stats lists a call of %s/%s", c.Servant, c.Function)
		}
	}
	if len(s.Calls) == 0 {
		t.Error("Stats lists no call: the user's calls are missing")
	}
	for _, e := range s.Endpoints {
		if e.Servant == statServant {
			t.Errorf("Stats lists the stat servant's endpoint %s", e.Endpoint)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[statServant] != 0 || seen[servant] != 2 {
		t.Errorf("the interceptor saw %v, want 2 calls of %s and none of %s", seen, servant, statServant)
	}
}

// TestStatReportsCalls configures stat, modulename and report-interval: the successes, timeouts
// and failures of the calls made reach a StatF servant within a report interval, counted as
// made, with TARS's head.
func TestStatReportsCalls(t *testing.T) {
	sink, statProxy := startStatSink(t)
	ep := startFaultEP(t, "a")
	cfg := conf.Default()
	cfg.TimeoutCheckInterval = tick
	cfg.Stat = statProxy
	cfg.ModuleName = "Test.Client"
	cfg.ReportInterval = time.Second
	comm, err := communicator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	const oks, fails = 30, 4
	for i := range oks {
		if _, err := sayHello(ctx, sp, "x", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	var se *communicator.ServerError
	for range fails {
		if _, err := sp.InvokeRaw(ctx, "NoSuchFunction", nil); !errors.As(err, &se) {
			t.Fatalf("unknown function: %v", err)
		}
	}
	ep.p.BlackHole(faultproxy.Both)
	if _, err := sayHello(ctx, sp, "t", 1, servantproxy.WithTimeout(50*time.Millisecond)); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("black-holed call: %v", err)
	}

	deadline := time.Now().Add(3 * time.Second) // one report interval and some
	for {
		sink.mu.Lock()
		hello, bad := sink.got["SayHello"], sink.got["NoSuchFunction"]
		head := sink.hd["SayHello"]
		sink.mu.Unlock()
		if hello.Count == oks && hello.TimeoutCount == 1 && bad.ExecCount == fails {
			if head.MasterName == "" || head.SlaveName != "Test.Server" || head.SlavePort == 0 {
				t.Errorf("report head %+v: want the module as master, Test.Server as slave, the endpoint's port", head)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("reports after %v: SayHello %+v, NoSuchFunction %+v; want %d successes, 1 timeout, %d failures", 3*time.Second, hello, bad, oks, fails)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReportCloseWithStalledStatServer: a Communicator reports to a StatF servant that stops
// answering (black-holed: its host hung). Close sends the last report within one report timeout
// in all: it used to send it batch by batch, each waiting the whole timeout (3 s), so that 60
// (servant, function, endpoint) keys, 6 batches, held Close for 18 s.
func TestReportCloseWithStalledStatServer(t *testing.T) {
	_, addr := serveStatSink(t)
	p := startProxy(t, addr)

	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) {
		c.Stat = statServant + "@" + tcpEndpoint(p.Addr())
		c.ModuleName = "Test.Client"
		c.ReportInterval = time.Hour // only Close's final report
	})
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	const keys = 60
	for i := range keys {
		if _, err := sp.InvokeRaw(ctx, fmt.Sprintf("F%02d", i), nil); err == nil {
			t.Fatalf("F%02d: no error from a function the server does not have", i)
		}
	}
	// The stat server's host hangs.
	p.BlackHole(faultproxy.Both)

	done := make(chan struct{})
	start := time.Now()
	go func() {
		_ = comm.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(live):
		t.Errorf("Communicator.Close blocked more than %v on a stalled stat service (%d report keys)", live, keys)
		<-done
		t.Logf("Close returned after %v", time.Since(start))
	}
}
