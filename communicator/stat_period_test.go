package communicator_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// TestStatReportSendsTheIntervalsExtremes: the Communicator's stat reporter sends each
// interval's own greatest and least latency, as TarsCpp's does. The first calls take ~0 and
// 400 ms (the lifetime's extremes); once they are reported, two calls the server holds 120 ms
// each. Every later report of SayHello holds those two only: its minRspTime is at least 120 ms
// and its maxRspTime at most the longest the test saw them take. Before, a report after the
// first sent the bounds of the buckets that grew, clamped to the lifetime's extremes:
// minRspTime 100 and maxRspTime 200 (the bucket [100, 200) ms).
func TestStatReportSendsTheIntervalsExtremes(t *testing.T) {
	sink, statProxy := startStatSink(t)
	ep := startFaultEP(t, "a")
	cfg := conf.Default()
	cfg.Stat = statProxy
	cfg.ModuleName = "Test.Client"
	cfg.ReportInterval = time.Second
	cfg.NetThread = 2
	comm, err := communicator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	reported := func() (count int32, bodies int) {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return sink.got["SayHello"].Count, len(sink.bodies["SayHello"])
	}

	if _, err := sayHello(ctx, sp, "x", 1); err != nil {
		t.Fatal(err)
	}
	ep.g.delay.Store(int64(400 * time.Millisecond))
	if _, err := sayHello(ctx, sp, "x", 2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first two calls reported", func() bool { n, _ := reported(); return n == 2 })
	_, before := reported()

	const hold = 120 * time.Millisecond
	ep.g.delay.Store(int64(hold))
	var longest time.Duration
	for seq := uint64(3); seq <= 4; seq++ {
		start := time.Now()
		if _, err := sayHello(ctx, sp, "x", seq); err != nil {
			t.Fatal(err)
		}
		longest = max(longest, time.Since(start))
	}
	waitFor(t, "the last two calls reported", func() bool { n, _ := reported(); return n == 4 })

	sink.mu.Lock()
	later := sink.bodies["SayHello"][before:]
	sink.mu.Unlock()
	if len(later) == 0 {
		t.Fatal("no report body after the first calls' reports")
	}
	for i, b := range later {
		if b.Count == 0 {
			continue
		}
		if b.MinRspTime < int32(hold/time.Millisecond) {
			t.Errorf("report %d after the first calls (%d calls): minRspTime %d ms, want at least %d (its calls were held that long)",
				i+1, b.Count, b.MinRspTime, hold/time.Millisecond)
		}
		if b.MaxRspTime > int32(longest/time.Millisecond) {
			t.Errorf("report %d after the first calls (%d calls): maxRspTime %d ms, want at most %d (the longest the test saw them take)",
				i+1, b.Count, b.MaxRspTime, longest/time.Millisecond)
		}
	}
}
