package communicator_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// statSink is a StatF servant that adds up the client reports it receives from this process,
// by function.
type statSink struct {
	mu  sync.Mutex
	got map[string]statf.StatMicMsgBody
	hd  map[string]statf.StatMicMsgHead
}

func (s *statSink) ReportMicMsg(_ context.Context, cur *server.Current, msg map[statf.StatMicMsgHead]statf.StatMicMsgBody, fromClient bool) (int32, error) {
	if !ownCaller(cur) {
		return 0, nil // another process's reporter: not this test's calls
	}
	s.mu.Lock()
	defer s.mu.Unlock()
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
	}
	return 0, nil
}

func (s *statSink) ReportSampleMsg(context.Context, *server.Current, []statf.StatSampleMsg) (int32, error) {
	return 0, nil
}

// TestStatReportsCalls configures stat, modulename and report-interval: the successes, timeouts
// and failures of the calls made reach a StatF servant within a report interval, counted as
// made, with TARS's head.
func TestStatReportsCalls(t *testing.T) {
	sink := &statSink{got: map[string]statf.StatMicMsgBody{}, hd: map[string]statf.StatMicMsgHead{}}
	srv := server.New()
	if err := statf.RegisterStatF(srv, "tars.tarsstat.StatObj", sink); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "stat server", srv) })

	ep := startFaultEP(t, "a")
	cfg := conf.Default()
	cfg.TimeoutCheckInterval = tick
	cfg.Stat = "tars.tarsstat.StatObj@" + tcpEndpoint(addr.String())
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
