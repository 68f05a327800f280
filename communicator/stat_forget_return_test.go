package communicator_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// summingSink is a StatF servant (the project's server, the generated statf code) that adds
// up every client report it gets from this process by (function, slave ip, slave port), and
// keeps each report's heads.
type summingSink struct {
	mu      sync.Mutex
	reports int
	sum     map[summingKey]statf.StatMicMsgBody
	heads   []statf.StatMicMsgHead
}

type summingKey struct {
	fn, ip string
	port   int32
}

func (s *summingSink) ReportMicMsg(_ context.Context, cur *server.Current, msg map[statf.StatMicMsgHead]statf.StatMicMsgBody, fromClient bool) (int32, error) {
	if !ownCaller(cur) {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reports++
	for h, b := range msg {
		s.heads = append(s.heads, h)
		k := summingKey{h.InterfaceName, h.SlaveIp, h.SlavePort}
		sum := s.sum[k]
		sum.Count += b.Count
		sum.TimeoutCount += b.TimeoutCount
		sum.ExecCount += b.ExecCount
		sum.TotalRspTime += b.TotalRspTime
		if sum.IntervalCount == nil {
			sum.IntervalCount = map[int32]int32{}
		}
		for p, n := range b.IntervalCount {
			sum.IntervalCount[p] += n
		}
		s.sum[k] = sum
	}
	return 0, nil
}

func (s *summingSink) ReportSampleMsg(context.Context, *server.Current, []statf.StatSampleMsg) (int32, error) {
	return 0, nil
}

// get returns the sum reported for fn to addr ("host:port", or "" for no endpoint).
func (s *summingSink) get(fn, addr string) statf.StatMicMsgBody {
	host, port := addr, int32(0)
	if h, p, err := net.SplitHostPort(addr); err == nil {
		host = h
		var n int
		_, _ = fmt.Sscan(p, &n)
		port = int32(n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum[summingKey{fn, host, port}]
}

// startSummingSink serves a summingSink on loopback; it returns it and its address.
func startSummingSink(t *testing.T) (*summingSink, net.Addr) {
	t.Helper()
	sink := &summingSink{sum: map[summingKey]statf.StatMicMsgBody{}}
	srv := server.New()
	if err := statf.RegisterStatF(srv, statServant, sink); err != nil {
		t.Fatal(err)
	}
	saddr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "stat server", srv) })
	return sink, saddr
}

// summingSinkProxy serves a summingSink on loopback and returns it with a StatF proxy of
// it from a Communicator of its own (so that the reports' calls are in no snapshot under test).
func summingSinkProxy(t *testing.T) (*summingSink, *statf.StatFProxy) {
	t.Helper()
	sink, addr := startSummingSink(t)
	rc := newComm(t, nil)
	prx := new(statf.StatFProxy)
	if err := rc.StringToProxy(statServant+"@"+tcpEndpoint(addr.String()), prx); err != nil {
		t.Fatal(err)
	}
	return sink, prx
}

// callsTo reports whether s counts calls to endpoint addr.
func callsTo(s stats.Snapshot, addr string) bool {
	for _, c := range s.Calls {
		if c.Servant == servant && c.Endpoint == addr {
			return true
		}
	}
	return false
}

// TestForgetReturnReportedWhole: the stat reporter reads Communicator.Stats every
// interval (here: Flush, driven by the test, more often than the retention, as
// WithStatsRetention asks). Endpoint A gets 5 calls, which are reported; A leaves the servant's
// list and its counts are forgotten after the retention; A comes back (the same host:port: a
// restarted instance, a registry flap) before the next report and gets 7 calls. The next
// report must carry those 7 calls (the new counters have another Gen, which Snapshot.Delta takes
// whole). Before, it carried 2: the reporter's previous snapshot still held A's 5 old calls, the
// new snapshot 7 under the same key, and Delta subtracted them (a reset was noticed only when a
// count went down).
func TestForgetReturnReportedWhole(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	b := startGreeter(t, "b", serverOpt{})
	sink, prx := summingSinkProxy(t)
	const retention = 300 * time.Millisecond
	src := &pushSource{ready: make(chan struct{})}
	comm := newCommWith(t, nil, communicator.WithNaming(src), communicator.WithStatsRetention(retention))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	go func() {
		<-src.ready
		src.send(a)
	}()

	var mu sync.Mutex
	flushSawA := false
	rep := stat.New(func() stats.Snapshot {
		s := comm.Stats()
		mu.Lock()
		flushSawA = callsTo(s, a.addr)
		mu.Unlock()
		return s
	}, prx, stat.Options{ModuleName: "Test.Client", FromClient: true})

	toA := 0 // calls answered by A
	// callUntil makes calls until n of them were answered by want (the list update may take a
	// moment to reach the net thread).
	callUntil := func(want *greeter, n int) {
		t.Helper()
		got := 0
		for seq := uint64(0); got < n; seq++ {
			if seq > 1000 {
				t.Fatalf("calls do not reach %s", want.id)
			}
			from, err := sayHello(ctx, sp, "x", seq)
			if err != nil {
				t.Fatal(err)
			}
			if from == "a" {
				toA++
			}
			if from == want.id {
				got++
			}
		}
	}

	callUntil(a, 5)
	if err := rep.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A leaves; the test flushes every 20ms (far below the retention) until A's counts are
	// forgotten. If a sweep happened to forget them just before a flush's snapshot, that report
	// already lacks them and nothing can go wrong: start the cycle again.
	dropped := false
	for cycle := 0; cycle < 3 && !dropped; cycle++ {
		if cycle > 0 {
			src.send(a)
			callUntil(a, 5)
		}
		src.send(b)
		callUntil(b, 1)
		for end := time.Now().Add(live); ; {
			if time.Now().After(end) {
				t.Fatalf("the counts of endpoint %s, out of the list, were not forgotten within %v (retention %v)", a.addr, live, retention)
			}
			if err := rep.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			// The first Stats may forget A (its snapshot still shows A); the second tells.
			comm.Stats()
			if !callsTo(comm.Stats(), a.addr) {
				break
			}
		}
		mu.Lock()
		dropped = flushSawA
		mu.Unlock()
	}
	if !dropped {
		t.Skip("setup: a sweep forgot A's counts just before each report's snapshot, three times")
	}
	// A comes back before the next report.
	src.send(a)
	callUntil(a, 7)
	if err := rep.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := sink.get("SayHello", a.addr)
	if int(got.Count) != toA {
		t.Errorf("the stat reports carried %d successful SayHello calls to %s in all, but %d were made (and each ended OK): "+
			"the calls made after the endpoint came back were reported less the counts forgotten before",
			got.Count, a.addr, toA)
	}
}
