package stat_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// slowStat is a StatF servant that keeps every report it receives and holds the first call
// until release is closed (a stat service that is slow, not down: it answers every call).
type slowStat struct {
	mu      sync.Mutex
	fns     map[string]int32 // interfaceName -> count received
	calls   int
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowStat) let() { s.once.Do(func() { close(s.release) }) }

func (s *slowStat) ReportMicMsg(_ context.Context, _ *server.Current, msg map[statf.StatMicMsgHead]statf.StatMicMsgBody, _ bool) (int32, error) {
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	for h, b := range msg {
		s.fns[h.InterfaceName] += b.Count
	}
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.release
	}
	return 0, nil
}

func (s *slowStat) ReportSampleMsg(context.Context, *server.Current, []statf.StatSampleMsg) (int32, error) {
	return 0, nil
}

func startSlowStat(t *testing.T) (*slowStat, *statf.StatFProxy) {
	t.Helper()
	impl := &slowStat{fns: map[string]int32{}, entered: make(chan struct{}), release: make(chan struct{})}
	srv := server.New(server.WithWorkers(4)) // the held call blocks one worker, not the loop
	if err := statf.RegisterStatF(srv, statObj, impl); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(conf.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		impl.let()
		_ = closetest.Within(t, "Communicator.Close", comm.Close)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	prx := new(statf.StatFProxy)
	if err := comm.StringToProxy(fmt.Sprintf("%s@tcp -h 127.0.0.1 -p %d", statObj, addr.(*net.TCPAddr).Port), prx); err != nil {
		t.Fatal(err)
	}
	return impl, prx
}

// TestReportCloseKeepsUnsentBatches: a periodic report of 9 entries goes out in 3 batches
// (max-report-size 500: 3 entries a batch). The stat service is slow: it holds the first batch
// until after Close. Close cancels the report under way and sends "what was counted since the
// last report". Every entry was counted once and the service answers every call it gets, so
// every entry must reach it once, by the periodic report or by Close's final one, as it does now.
// Before, the 6 entries of batches 2 and 3 reached it by neither: the periodic report consumed
// them (prev moved on) and gave up on Close, and the final report sent only what was counted
// after.
func TestReportCloseKeepsUnsentBatches(t *testing.T) {
	impl, prx := startSlowStat(t)
	var rec stats.Shared
	const n = 9
	for i := range n {
		rec.Record("Hello.Server.GreeterObj", fmt.Sprintf("function%02d", i), "127.0.0.1:1", stats.OK, 0, ms(1))
	}
	r := stat.New(rec.Snapshot, prx, stat.Options{ModuleName: "Test.Client", FromClient: true, MaxReportSize: 500, Interval: 20 * time.Millisecond})
	if b := stat.Messages(rec.Snapshot(), stat.Options{ModuleName: "Test.Client", FromClient: true, MaxReportSize: 500}, ""); len(b) != 3 {
		t.Fatalf("%d batches, the test needs 3", len(b))
	}
	r.Start()
	select {
	case <-impl.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no periodic report within 10s of a 20ms interval")
	}
	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close returned %v", err)
	case <-time.After(15 * time.Second):
		impl.let()
		t.Fatal("Close did not return within 15s")
	}
	impl.let()
	impl.mu.Lock()
	defer impl.mu.Unlock()
	var missing []string
	for i := range n {
		fn := fmt.Sprintf("function%02d", i)
		if impl.fns[fn] != 1 {
			missing = append(missing, fmt.Sprintf("%s:%d", fn, impl.fns[fn]))
		}
	}
	if len(missing) != 0 {
		t.Errorf("after Close, the stat service received %d calls; entries not reported exactly once (name:times): %v; want each of the %d counted calls reported once (by the periodic report or by Close's final report)",
			impl.calls, missing, n)
	}
}
