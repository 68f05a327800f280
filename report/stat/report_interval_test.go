package stat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// TestReportFirstReportThreadMissing: the first report is taken while net thread 0 does not
// answer (Communicator.Stats leaves it out). Thread 0 had counted SayHello first (its counters
// are older), thread 1 after. The first report waits for the next interval (Options.Threads says
// a whole snapshot has two), which sends each call once. Before, the first report was sent with
// thread 1's call (there was nothing to compare with), and the next sent thread 1's call again
// (the merged counters' Gen is thread 0's, not the previous snapshot's, and Delta takes them
// whole): 3 calls reported for 2.
func TestReportFirstReportThreadMissing(t *testing.T) {
	impl, prx := start(t)
	const obj, ep = "Hello.Server.GreeterObj", "127.0.0.1:18015"
	var a, b stats.Shared // net threads 0 and 1
	part := func(p *stats.Shared, idx int) stats.Snapshot {
		s := p.Snapshot()
		s.Threads = []stats.NetThread{{Index: idx}}
		return s
	}
	missing := true
	src := func() stats.Snapshot {
		if missing {
			return stats.Merge(part(&b, 1))
		}
		return stats.Merge(part(&a, 0), part(&b, 1))
	}
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
	r := stat.New(src, prx, stat.Options{ModuleName: "Test.Client", FromClient: true, Threads: 2})
	if err := r.Flush(context.Background()); err == nil {
		t.Error("the first report, with a net thread missing, was sent; want it deferred")
	}
	first := count()
	missing = false
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := count()
	if first+second != 2 {
		t.Errorf("2 calls made (one per net thread); reported %d in the first report (thread 0 missing) and %d in the next (both threads): %d in all, want 2 (each call once)",
			first, second, first+second)
	}
	_ = r.Close()
}

// TestReportSlaveNameLimit: TarsCpp limits slaveName to 127 bytes (AdapterProxy::
// initStatHead: trimAndLimitStr(sSlaveName, MAX_MASTER_NAME_LEN)) whether or not the endpoint
// is in a set, and so does this now. Before, masterName and the set slaveName were limited, the
// plain slaveName was not.
func TestReportSlaveNameLimit(t *testing.T) {
	var rec stats.Recorder
	long := "App." + strings.Repeat("s", 200)
	rec.Record(long+".Obj", "f", "127.0.0.1:1", stats.OK, 0, ms(1))
	batches := stat.Messages(rec.Snapshot(), stat.Options{ModuleName: "X.Y", FromClient: true}, "")
	for _, b := range batches {
		for h := range b {
			if len(h.SlaveName) > 127 {
				t.Errorf("slaveName of %d bytes (%q...); TarsCpp sends at most 127", len(h.SlaveName), h.SlaveName[:20])
			}
		}
	}
}
