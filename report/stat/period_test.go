package stat_test

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// extremes returns the maxRspTime and minRspTime of SayHello in the reports impl received
// since the last take, and how many bodies carried it.
func extremes(t *testing.T, impl *statServer) (maxMs, minMs int32) {
	t.Helper()
	n := 0
	for _, rep := range impl.take() {
		for h, b := range rep.msg {
			if h.InterfaceName == "SayHello" {
				maxMs, minMs = b.MaxRspTime, b.MinRspTime
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("SayHello in %d report bodies, want 1", n)
	}
	return maxMs, minMs
}

// TestReportExtremesOfTheInterval: a report after the first sends the greatest and least latency
// of its interval, when its source ends periods (stats.Shared.SnapshotEndingPeriod, as the
// Communicator's and Server.StatsEndingPeriod do). The first interval holds 1 ms and 400 ms; the
// second 120 ms and 130 ms, in the bucket [100, 200) ms. Before, the second report sent the
// bucket's bounds, maxRspTime 200 and minRspTime 100 (Histogram.Sub's estimate: the interval
// moved neither lifetime extreme), where TarsCpp sends 130 and 120.
func TestReportExtremesOfTheInterval(t *testing.T) {
	impl, prx := start(t)
	var rec stats.Shared
	const obj, ep = "Hello.Server.GreeterObj", "127.0.0.1:18015"
	rec.Record(obj, "SayHello", ep, stats.OK, 0, ms(1))
	rec.Record(obj, "SayHello", ep, stats.OK, 0, ms(400))
	r := stat.New(rec.SnapshotEndingPeriod, prx, stat.Options{ModuleName: "Test.Client", FromClient: true})
	defer r.Close()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mx, mn := extremes(t, impl); mx != 400 || mn != 1 {
		t.Errorf("first report: max %d min %d ms, want 400 and 1", mx, mn)
	}
	rec.Record(obj, "SayHello", ep, stats.OK, 0, ms(130))
	rec.Record(obj, "SayHello", ep, stats.OK, 0, ms(120))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mx, mn := extremes(t, impl); mx != 130 || mn != 120 {
		t.Errorf("second report: max %d min %d ms, want 130 and 120 (the interval's own)", mx, mn)
	}
}

// TestReportExtremesAcrossADeferredReport: a report deferred because a net thread did not answer
// (net thread 1 here) keeps what the periods of the threads that answered held (thread 0 ended
// its period as it answered), so the report that goes next still sends the extremes of all its
// calls. Thread 0 has 150 ms before the deferral and 110 ms after, thread 1 180 ms: the report
// sends max 180, min 110. Without the carried periods thread 0's 150 ms would be lost, and the
// periods would no longer hold the delta's calls: estimates, 200 and 100.
func TestReportExtremesAcrossADeferredReport(t *testing.T) {
	impl, prx := start(t)
	var a, b stats.Shared // net threads 0 and 1
	const obj, ep = "Hello.Server.GreeterObj", "127.0.0.1:18015"
	missing := -1
	src := twoThreads(&a, &b, &missing)
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(1))
	b.Record(obj, "SayHello", ep, stats.OK, 0, ms(900))
	r := stat.New(src, prx, stat.Options{ModuleName: "Test.Client", FromClient: true, Threads: 2})
	defer r.Close()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mx, mn := extremes(t, impl); mx != 900 || mn != 1 {
		t.Errorf("first report: max %d min %d ms, want 900 and 1", mx, mn)
	}
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(150))
	missing = 1
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a report with net thread 1 missing was sent; want it deferred")
	}
	missing = -1
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(110))
	b.Record(obj, "SayHello", ep, stats.OK, 0, ms(180))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mx, mn := extremes(t, impl); mx != 180 || mn != 110 {
		t.Errorf("report after the deferred one: max %d min %d ms, want 180 and 110 (150, 110 and 180 were made since the first)", mx, mn)
	}
}

// twoThreads is the snapshot source of two net threads, recorded in a (index 0) and b (index 1),
// each ending its period as it answers, as the Communicator's do; *missing names a thread that
// does not answer (-1: none).
func twoThreads(a, b *stats.Shared, missing *int) func() stats.Snapshot {
	part := func(p *stats.Shared, idx int) stats.Snapshot {
		s := p.SnapshotEndingPeriod()
		s.Threads = []stats.NetThread{{Index: idx}}
		return s
	}
	return func() stats.Snapshot {
		switch *missing {
		case 0:
			return stats.Merge(part(b, 1))
		case 1:
			return stats.Merge(part(a, 0))
		}
		return stats.Merge(part(a, 0), part(b, 1))
	}
}
