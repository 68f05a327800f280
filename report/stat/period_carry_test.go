package stat_test

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// TestReportExtremesAcrossTwoDeferredReports: two reports in a row deferred, each missing a
// different net thread (thread 0 alone calls SayHello, thread 1 only Other): the report that
// finally goes sends SayHello's interval extremes, 150 and 110 ms. Before (found by reviewing the
// day's diff), the second deferral's snapshot held no SayHello and the carried period of the
// first was dropped with it: the report had 2 successes and a period of 1, and sent the
// bucket's bound, 100, as minRspTime.
func TestReportExtremesAcrossTwoDeferredReports(t *testing.T) {
	impl, prx := start(t)
	var a, b stats.Shared // net threads 0 and 1
	const obj, ep = "Hello.Server.GreeterObj", "127.0.0.1:18015"
	missing := -1
	src := twoThreads(&a, &b, &missing)
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(1))
	b.Record(obj, "Other", ep, stats.OK, 0, ms(900))
	r := stat.New(src, prx, stat.Options{ModuleName: "Test.Client", FromClient: true, Threads: 2})
	defer r.Close()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	impl.take()

	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(150))
	missing = 1
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a report with net thread 1 missing was sent; want it deferred")
	}
	missing = 0
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a report with net thread 0 missing was sent; want it deferred")
	}
	missing = -1
	a.Record(obj, "SayHello", ep, stats.OK, 0, ms(110))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	mx, mn := extremes(t, impl)
	if mx != 150 || mn != 110 {
		t.Errorf("report after two deferred ones: SayHello max %d min %d ms; want 150 and 110 "+
			"(the interval's calls were 150 and 110 ms; the carried period of the first deferral was dropped by the second)", mx, mn)
	}
}
