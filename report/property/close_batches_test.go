package property_test

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
	"github.com/tarscomm/tarscomm/protocol/propertyf"
	"github.com/tarscomm/tarscomm/report/property"
	"github.com/tarscomm/tarscomm/server"
)

// slowProp is a PropertyF servant that sums the Count values it receives by property and holds
// the first call until let (a slow service, not a dead one: it answers every call).
type slowProp struct {
	mu      sync.Mutex
	sum     map[string]int
	calls   int
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowProp) let() { s.once.Do(func() { close(s.release) }) }

func (s *slowProp) ReportPropMsg(_ context.Context, _ *server.Current, m map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody) (int32, error) {
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	for h, b := range m {
		for _, in := range b.VInfo {
			if in.Policy == "Count" {
				var n int
				_, _ = fmt.Sscan(in.Value, &n)
				s.sum[h.PropertyName] += n
			}
		}
	}
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.release
	}
	return 0, nil
}

// TestPropertyCloseKeepsUnsentBatches: a periodic report of 8 properties goes out in 2
// batches (max-report-size 500: 4 a batch). The property service holds the first batch until
// after Close. Each property had one value reported; the service answers every call it gets, so
// each property's Count of 1 must reach it once, by the periodic report or by Close's final one.
// Before, the second batch's properties reached it by neither: their values were taken (reset)
// by the periodic report, which gave up on Close, and the final report sent Count 0.
func TestPropertyCloseKeepsUnsentBatches(t *testing.T) {
	impl := &slowProp{sum: map[string]int{}, entered: make(chan struct{}), release: make(chan struct{})}
	srv := server.New(server.WithWorkers(4)) // the held call blocks one worker, not the loop
	const obj = "tars.tarsproperty.PropertyObj"
	if err := propertyf.RegisterPropertyF(srv, obj, impl); err != nil {
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
	prx := new(propertyf.PropertyFProxy)
	if err := comm.StringToProxy(fmt.Sprintf("%s@tcp -h 127.0.0.1 -p %d", obj, addr.(*net.TCPAddr).Port), prx); err != nil {
		t.Fatal(err)
	}

	reg := property.NewRegistry()
	const n = 8
	for i := range n {
		reg.New(fmt.Sprintf("p%02d", i), property.Count()).Report(1)
	}
	r := property.NewReporter(reg, prx, property.Options{ModuleName: "Test.Server", MaxReportSize: 500, Interval: 20 * time.Millisecond})
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
	var wrong []string
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		if impl.sum[name] != 1 {
			wrong = append(wrong, fmt.Sprintf("%s:%d", name, impl.sum[name]))
		}
	}
	if len(wrong) != 0 {
		t.Errorf("after Close (%d calls received), properties whose one reported value is not counted once (name:Count received): %v; want Count 1 for each of the %d, by the periodic report or Close's final one",
			impl.calls, wrong, n)
	}
}
