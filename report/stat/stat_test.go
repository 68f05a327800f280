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

const statObj = "tars.tarsstat.StatObj"

// statServer is a StatF servant on the project's server that keeps every report it receives.
type statServer struct {
	mu      sync.Mutex
	reports []report
	got     chan struct{}
}

type report struct {
	msg        map[statf.StatMicMsgHead]statf.StatMicMsgBody
	fromClient bool
}

func (s *statServer) ReportMicMsg(_ context.Context, _ *server.Current, msg map[statf.StatMicMsgHead]statf.StatMicMsgBody, fromClient bool) (int32, error) {
	s.mu.Lock()
	s.reports = append(s.reports, report{msg, fromClient})
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
	return 0, nil
}

func (s *statServer) ReportSampleMsg(context.Context, *server.Current, []statf.StatSampleMsg) (int32, error) {
	return 0, nil
}

func (s *statServer) take() []report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports
	s.reports = nil
	return r
}

// start serves a statServer on loopback and returns a proxy of it from a real Communicator.
func start(t *testing.T) (*statServer, *statf.StatFProxy) {
	t.Helper()
	impl := &statServer{got: make(chan struct{}, 1)}
	srv := server.New()
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
		_ = closetest.Within(t, "Communicator.Close", comm.Close)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	prx := new(statf.StatFProxy)
	port := addr.(*net.TCPAddr).Port
	if err := comm.StringToProxy(fmt.Sprintf("%s@tcp -h 127.0.0.1 -p %d", statObj, port), prx); err != nil {
		t.Fatal(err)
	}
	return impl, prx
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestClientReportFieldByField(t *testing.T) {
	impl, prx := start(t)
	var rec stats.Shared
	const obj, ep = "Hello.Server.GreeterObj", "127.0.0.1:18015"
	for _, d := range []time.Duration{ms(1), ms(7), ms(60), ms(4000)} {
		rec.Record(obj, "SayHello", ep, stats.OK, 0, d)
	}
	rec.Record(obj, "SayHello", ep, stats.Timeout, 0, time.Second)
	rec.Record(obj, "SayHello", ep, stats.Timeout, 0, time.Second)
	rec.Record(obj, "SayHello", ep, stats.ServerError, -3, ms(1))
	rec.Record(obj, "SayHello", ep, stats.QueueFull, 0, 0)
	rec.Record(obj, "SayBye", "10.0.0.2:9000", stats.Connection, 0, 0)
	rec.Record(statObj, "reportMicMsg", ep, stats.OK, 0, ms(1)) // its own calls: not reported

	r := stat.New(rec.Snapshot, prx, stat.Options{ModuleName: "Test.Client", NodeName: "node-1", FromClient: true})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reps := impl.take()
	if len(reps) != 1 || !reps[0].fromClient {
		t.Fatalf("got %d reports (fromClient %v), want 1 from a client", len(reps), len(reps) > 0 && reps[0].fromClient)
	}
	msg := reps[0].msg
	if len(msg) != 2 {
		t.Fatalf("%d heads, want 2: %+v", len(msg), msg)
	}
	wantHead := statf.StatMicMsgHead{
		MasterName: "Test.Client@" + stat.DefaultVersion, SlaveName: "Hello.Server", InterfaceName: "SayHello",
		MasterIp: "node-1", SlaveIp: "127.0.0.1", SlavePort: 18015, ReturnValue: 0,
	}
	b, ok := msg[wantHead]
	if !ok {
		t.Fatalf("no head %+v in %+v", wantHead, msg)
	}
	want := statf.StatMicMsgBody{
		Count: 4, TimeoutCount: 2, ExecCount: 2,
		// 1 ms < 5; 7 ms in [5, 10); 60 ms in [50, 100); 4 s in none.
		IntervalCount: map[int32]int32{5: 1, 10: 1, 50: 0, 100: 1, 200: 0, 500: 0, 1000: 0, 2000: 0, 3000: 0},
		TotalRspTime:  4068, MaxRspTime: 4000, MinRspTime: 1,
	}
	if fmt.Sprint(b) != fmt.Sprint(want) {
		t.Errorf("body\n got %+v\nwant %+v", b, want)
	}
	bye := statf.StatMicMsgHead{MasterName: wantHead.MasterName, SlaveName: "Hello.Server", InterfaceName: "SayBye", MasterIp: "node-1", SlaveIp: "10.0.0.2", SlavePort: 9000}
	if b := msg[bye]; b.ExecCount != 1 || b.Count != 0 || len(b.IntervalCount) != 9 {
		t.Errorf("SayBye body %+v (present %v)", b, msg[bye].IntervalCount != nil)
	}

	// The next report holds only what happened since.
	rec.Record(obj, "SayHello", ep, stats.OK, 0, ms(3))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reps = impl.take()
	if len(reps) != 1 || len(reps[0].msg) != 1 {
		t.Fatalf("second report: %+v", reps)
	}
	if b := reps[0].msg[wantHead]; b.Count != 1 || b.TimeoutCount != 0 || b.ExecCount != 0 || b.IntervalCount[5] != 1 || b.TotalRspTime != 3 {
		t.Errorf("second body %+v", b)
	}
	// Nothing new: nothing sent.
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reps := impl.take(); len(reps) != 0 {
		t.Errorf("empty interval sent %d reports", len(reps))
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
}

func TestServerReport(t *testing.T) {
	impl, prx := start(t)
	var rec stats.Shared
	rec.Record("Test.Server.EchoObj", "Echo", "0.0.0.0:20000", stats.OK, 0, ms(12))
	rec.Record("Test.Server.EchoObj", "Echo", "0.0.0.0:20000", stats.ServerError, -99, ms(1))
	r := stat.New(rec.Snapshot, prx, stat.Options{ModuleName: "Test.Server", LocalIP: "192.0.2.7"})
	if err := r.Close(); err != nil { // Close without Start sends what is left
		t.Fatal(err)
	}
	reps := impl.take()
	if len(reps) != 1 || reps[0].fromClient {
		t.Fatalf("want one server report (bFromClient=false): %+v", reps)
	}
	h := statf.StatMicMsgHead{MasterName: stat.ServerMasterName, SlaveName: "Test.Server", InterfaceName: "Echo", SlaveIp: "192.0.2.7", SlavePort: 20000}
	b, ok := reps[0].msg[h]
	if !ok || b.Count != 1 || b.ExecCount != 1 || b.IntervalCount[50] != 1 || b.MaxRspTime != 12 {
		t.Fatalf("server head/body: %+v", reps[0].msg)
	}
}

func TestBatchesSplitByMaxReportSize(t *testing.T) {
	impl, prx := start(t)
	var rec stats.Shared
	const n = 40
	for i := range n {
		rec.Record("Hello.Server.GreeterObj", fmt.Sprintf("function%02d", i), "127.0.0.1:1", stats.OK, 0, ms(1))
	}
	o := stat.Options{ModuleName: "Test.Client", FromClient: true, MaxReportSize: 500}
	batches := stat.Messages(rec.Snapshot(), o, "")
	total := 0
	for _, b := range batches {
		size := 0
		for h := range b {
			size += 100 + len(h.MasterName) + len(h.SlaveName) + len(h.InterfaceName)
		}
		if size > 500 {
			t.Errorf("batch of %d bytes > 500", size)
		}
		total += len(b)
	}
	// Each entry counts 100 + 17 + 12 + 10 = 139 bytes: 3 per batch.
	if total != n || len(batches) != (n+2)/3 {
		t.Fatalf("%d entries in %d batches, want %d in %d", total, len(batches), n, (n+2)/3)
	}

	r := stat.New(rec.Snapshot, prx, o)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reps := impl.take()
	got := 0
	for _, rep := range reps {
		got += len(rep.msg)
	}
	if len(reps) != len(batches) || got != n {
		t.Errorf("server got %d entries in %d calls, want %d in %d", got, len(reps), n, len(batches))
	}
	r.Close()
}

func TestStartReportsEveryInterval(t *testing.T) {
	impl, prx := start(t)
	var rec stats.Shared
	rec.Record("Hello.Server.GreeterObj", "SayHello", "127.0.0.1:1", stats.OK, 0, ms(1))
	r := stat.New(rec.Snapshot, prx, stat.Options{ModuleName: "Test.Client", FromClient: true, Interval: 50 * time.Millisecond})
	r.Start()
	r.Start()
	select {
	case <-impl.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no report within 10s of a 50ms interval")
	}
	rec.Record("Hello.Server.GreeterObj", "SayHello", "127.0.0.1:1", stats.Timeout, 0, 0)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var ok, timeouts int32
	for _, rep := range impl.take() {
		for _, b := range rep.msg {
			ok += b.Count
			timeouts += b.TimeoutCount
		}
	}
	if ok != 1 || timeouts != 1 {
		t.Errorf("reported %d successes and %d timeouts over the intervals, want 1 and 1", ok, timeouts)
	}
}

func TestMergedHeads(t *testing.T) {
	// Two objects of one server map to the same head: their bodies add up.
	var rec stats.Recorder
	rec.Record("A.B.Obj1", "f", "h:1", stats.OK, 0, ms(3))
	rec.Record("A.B.Obj2", "f", "h:1", stats.OK, 0, ms(9))
	rec.Record("A.B.Obj2", "f", "h:1", stats.Timeout, 0, 0)
	batches := stat.Messages(rec.Snapshot(), stat.Options{ModuleName: "X.Y", FromClient: true}, "")
	if len(batches) != 1 || len(batches[0]) != 1 {
		t.Fatalf("batches %+v", batches)
	}
	for _, b := range batches[0] {
		if b.Count != 2 || b.TimeoutCount != 1 || b.MinRspTime != 3 || b.MaxRspTime != 9 || b.TotalRspTime != 12 || b.IntervalCount[5] != 1 || b.IntervalCount[10] != 1 {
			t.Errorf("merged body %+v", b)
		}
	}
}

// TestThreadMissingDefersReport: a snapshot that lacks a net thread (it did not answer
// Communicator.Stats in time) is not reported: its calls would read as counters back at 0, the
// report would send the other threads' whole history, and the next one the missing thread's.
// The report after it sends what happened since the last complete one, once.
func TestThreadMissingDefersReport(t *testing.T) {
	impl, prx := start(t)
	const obj, ep = "Hello.Server.GreeterObj", "127.0.0.1:18015"
	var a, b stats.Shared // two net threads' counts
	snap := func(parts ...*stats.Shared) stats.Snapshot {
		var ss []stats.Snapshot
		for i, p := range parts {
			s := p.Snapshot()
			s.Threads = []stats.NetThread{{Index: i}}
			ss = append(ss, s)
		}
		return stats.Merge(ss...)
	}
	missing := false
	src := func() stats.Snapshot {
		if missing {
			return snap(&a)
		}
		return snap(&a, &b)
	}
	r := stat.New(src, prx, stat.Options{ModuleName: "Test.Client", FromClient: true})
	count := func() int32 {
		var n int32
		for _, rep := range impl.take() {
			for _, body := range rep.msg {
				n += body.Count
			}
		}
		return n
	}
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(1))
	b.Record(obj, "SayHello", ep, stats.OK, 0, ms(1))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("first report: %d calls, want 2", n)
	}
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(1))
	missing = true
	if err := r.Flush(context.Background()); err == nil {
		t.Error("a report without one of the net threads: no error")
	}
	if n := count(); n != 0 {
		t.Fatalf("a report without one of the net threads sent %d calls, want none", n)
	}
	missing = false
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("the next complete report: %d calls, want 1 (the one made meanwhile)", n)
	}
}
