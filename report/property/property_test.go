package property_test

import (
	"context"
	"fmt"
	"math"
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

func TestPoliciesAsTarsCpp(t *testing.T) {
	reg := property.NewRegistry()
	p := reg.New("latency", property.Sum(), property.Avg(), property.Distr(100, 10, 1000), property.Max(), property.Min(), property.Count())
	if reg.New("latency", property.Sum()) != p {
		t.Fatal("a second New of a name made a second property")
	}
	for _, v := range []int64{0, 5, 10, 99, 250, 1000, 7} {
		p.Report(v)
	}
	got := fmt.Sprint(p.Take())
	// Distr: 0, 5, 7 < 10; 10 and 99 < 100; 250 < 1000; 1000 past the last bound ("max", as
	// TarsCpp's distr::get).
	want := "[{Sum 1371} {Avg 195.857143} {Distr 10|3,100|2,1000|1,max|1} {Max 1000} {Min 5} {Count 7}]"
	if got != want {
		t.Errorf("values\n got %s\nwant %s", got, want)
	}
	// A new interval: Min of 0 left out, Avg "0".
	got = fmt.Sprint(p.Take())
	if want := "[{Sum 0} {Avg 0} {Distr 10|0,100|0,1000|0,max|0} {Max 0} {Count 0}]"; got != want {
		t.Errorf("empty interval\n got %s\nwant %s", got, want)
	}
	if n := len(reg.Properties()); n != 1 {
		t.Errorf("%d properties", n)
	}
	// The extremes: math.MaxInt64 is above every bound (v+1 once overflowed into the first
	// bucket), math.MinInt64 below the first.
	d := reg.New("extremes", property.Distr(10, 100))
	d.Report(math.MaxInt64)
	d.Report(math.MinInt64)
	if got, want := fmt.Sprint(d.Take()), "[{Distr 10|1,100|0,max|1}]"; got != want {
		t.Errorf("Distr of MaxInt64 and MinInt64\n got %s\nwant %s", got, want)
	}
}

func TestReportIsSafeForConcurrentUse(t *testing.T) {
	p := property.NewRegistry().New("hits", property.Sum(), property.Count())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				p.Report(int64(g + 1))
			}
		}()
	}
	wg.Wait()
	if got := fmt.Sprint(p.Take()); got != "[{Sum 10000} {Count 4000}]" {
		t.Errorf("got %s", got)
	}
}

type propServer struct {
	mu   sync.Mutex
	msgs []map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody
	got  chan struct{}
}

func (s *propServer) ReportPropMsg(_ context.Context, _ *server.Current, m map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody) (int32, error) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
	return 0, nil
}

func (s *propServer) take() []map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgs
	s.msgs = nil
	return m
}

func start(t *testing.T) (*propServer, *propertyf.PropertyFProxy) {
	t.Helper()
	impl := &propServer{got: make(chan struct{}, 1)}
	srv := server.New()
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
	return impl, prx
}

func TestReporterSendsReportPropMsg(t *testing.T) {
	impl, prx := start(t)
	reg := property.NewRegistry()
	reg.New("logins", property.Sum(), property.Count()).Report(3)
	reg.New("queue", property.Max(), property.Min()).Report(17)
	r := property.NewReporter(reg, prx, property.Options{ModuleName: "Test.Server", Interval: 50 * time.Millisecond})
	r.Start()
	select {
	case <-impl.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no report within 10s of a 50ms interval")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	msgs := impl.take()
	if len(msgs) == 0 {
		t.Fatal("no message")
	}
	first := msgs[0]
	h := propertyf.StatPropMsgHead{ModuleName: "Test.Server", PropertyName: "logins", IPropertyVer: 2}
	if b, ok := first[h]; !ok || fmt.Sprint(b.VInfo) != "[{Sum 3} {Count 1}]" {
		t.Errorf("logins: %+v (head present %v) in %+v", b, ok, first)
	}
	h.PropertyName = "queue"
	if b := first[h]; fmt.Sprint(b.VInfo) != "[{Max 17} {Min 17}]" {
		t.Errorf("queue: %+v", b)
	}
	// Later intervals report the properties again, with values reset.
	last := msgs[len(msgs)-1]
	if b := last[h]; len(msgs) > 1 && fmt.Sprint(b.VInfo) != "[{Max 0}]" {
		t.Errorf("queue in a later interval: %+v", b)
	}
}

func TestBatches(t *testing.T) {
	reg := property.NewRegistry()
	for i := range 20 {
		reg.New(fmt.Sprintf("p%02d", i), property.Count()).Report(1)
	}
	// 100 + 11 ("Test.Server") + 3 + 5 ("Count") + 1 = 120 bytes each: 4 per 500-byte batch.
	batches := property.Messages(reg, property.Options{ModuleName: "Test.Server", MaxReportSize: 500})
	n := 0
	for _, b := range batches {
		if len(b) > 4 {
			t.Errorf("batch of %d properties", len(b))
		}
		n += len(b)
	}
	if n != 20 || len(batches) != 5 {
		t.Errorf("%d properties in %d batches", n, len(batches))
	}
}

func BenchmarkReport(b *testing.B) {
	p := property.NewRegistry().New("x", property.Sum(), property.Avg(), property.Max(), property.Distr(1, 10, 100, 1000))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var v int64
		for pb.Next() {
			v++
			p.Report(v & 1023)
		}
	})
}
