package stats_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/stats"
)

func TestBucketsHoldTarsPoints(t *testing.T) {
	b := stats.Bounds()
	if len(b) != stats.NumBuckets-1 {
		t.Fatalf("%d bounds for %d buckets", len(b), stats.NumBuckets)
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			t.Fatalf("bounds not increasing at %d: %v", i, b)
		}
	}
	for _, ms := range stats.TarsBounds {
		found := false
		for _, d := range b {
			if d == time.Duration(ms)*time.Millisecond {
				found = true
			}
		}
		if !found {
			t.Errorf("TARS bucket %d ms is not a bound", ms)
		}
	}
	if b[len(b)-1] != 3*time.Second {
		t.Errorf("last bound %v, want 3s (TARS counts nothing above)", b[len(b)-1])
	}
}

func TestHistogramObserve(t *testing.T) {
	var h stats.Histogram
	for _, d := range []time.Duration{0, 99 * time.Microsecond, 100 * time.Microsecond, 4 * time.Millisecond, 5 * time.Millisecond, 3 * time.Second, -time.Second} {
		h.Observe(d)
	}
	// 0, 99µs and -1s (as 0) in bucket 0; 100µs in bucket 1; 4ms in [2.5ms,5ms); 5ms in
	// [5ms,10ms); 3s in the last.
	want := map[int]uint64{0: 3, 1: 1, 5: 1, 6: 1, stats.NumBuckets - 1: 1}
	for i, c := range h.Counts {
		if c != want[i] {
			t.Errorf("bucket %d: %d, want %d", i, c, want[i])
		}
	}
	if h.Count() != 7 || h.Min != 0 || h.Max != 3*time.Second {
		t.Errorf("count %d min %v max %v", h.Count(), h.Min, h.Max)
	}
	if wantSum := 99*time.Microsecond + 100*time.Microsecond + 9*time.Millisecond + 3*time.Second; h.Sum != wantSum {
		t.Errorf("sum %v, want %v", h.Sum, wantSum)
	}
}

func TestHistogramMinOfFirstSample(t *testing.T) {
	var h stats.Histogram
	h.Observe(7 * time.Millisecond)
	h.Observe(9 * time.Millisecond)
	if h.Min != 7*time.Millisecond || h.Max != 9*time.Millisecond {
		t.Fatalf("min %v max %v", h.Min, h.Max)
	}
}

func TestHistogramSubAndQuantile(t *testing.T) {
	var h stats.Histogram
	h.Observe(time.Millisecond)
	h.Observe(300 * time.Millisecond)
	prev := h
	h.Observe(20 * time.Millisecond)
	h.Observe(30 * time.Millisecond)
	d := h.Sub(prev)
	if d.Count() != 2 || d.Sum != 50*time.Millisecond {
		t.Fatalf("delta count %d sum %v", d.Count(), d.Sum)
	}
	// Neither the lifetime min nor max moved: estimated from the buckets that grew,
	// [10ms,25ms) and [25ms,50ms).
	if d.Min != 10*time.Millisecond || d.Max != 50*time.Millisecond {
		t.Errorf("estimated min %v max %v, want 10ms and 50ms", d.Min, d.Max)
	}
	h.Observe(2 * time.Second)
	d = h.Sub(prev)
	if d.Max != 2*time.Second {
		t.Errorf("max moved in the interval: %v, want exact 2s", d.Max)
	}
	if q := h.Quantile(0.5); q < 10*time.Millisecond || q > 50*time.Millisecond {
		t.Errorf("median %v, want within [10ms, 50ms]", q)
	}
	if q := h.Quantile(1); q != 2*time.Second {
		t.Errorf("p100 %v, want the max", q)
	}
	var empty stats.Histogram
	if empty.Quantile(0.9) != 0 || empty.Mean() != 0 {
		t.Error("empty histogram has a quantile or mean")
	}
}

func TestRecorderCountsByKeyAndResult(t *testing.T) {
	var r stats.Recorder
	ep := r.Endpoint("A.B.Obj", "127.0.0.1:1")
	ep.Record("f", stats.OK, 0, 2*time.Millisecond)
	ep.Record("f", stats.OK, 0, 4*time.Millisecond)
	ep.Record("f", stats.Timeout, 0, time.Second)
	ep.Record("f", stats.ServerError, -3, time.Millisecond)
	ep.Record("f", stats.ServerError, -3, time.Millisecond)
	ep.Record("f", stats.ServerError, -99, time.Millisecond)
	ep.Record("g", stats.Connection, 0, 0)
	r.Record("A.B.Obj", "f", "", stats.NoEndpoint, 0, 0)
	if r.Endpoint("A.B.Obj", "127.0.0.1:1") != ep {
		t.Fatal("Endpoint made a second recorder for the same pair")
	}

	s := r.Snapshot()
	if len(s.Calls) != 3 {
		t.Fatalf("%d keys, want 3: %+v", len(s.Calls), s.Calls)
	}
	// Sorted by servant, function, endpoint: f@"" < f@127.0.0.1:1 < g.
	if s.Calls[0].Endpoint != "" || s.Calls[1].Function != "f" || s.Calls[2].Function != "g" {
		t.Fatalf("order: %+v", s.Calls)
	}
	f := s.Calls[1]
	if f.Calls() != 6 || f.Results[stats.OK] != 2 || f.Results[stats.Timeout] != 1 || f.Results[stats.ServerError] != 3 || f.Failures() != 4 {
		t.Errorf("f counters %+v", f.Results)
	}
	if len(f.Codes) != 2 || f.Codes[0] != (stats.CodeCount{Code: -99, Count: 1}) || f.Codes[1] != (stats.CodeCount{Code: -3, Count: 2}) {
		t.Errorf("codes %+v", f.Codes)
	}
	if f.Latency.Count() != 2 || f.Latency.Sum != 6*time.Millisecond || f.Latency.Min != 2*time.Millisecond || f.Latency.Max != 4*time.Millisecond {
		t.Errorf("latency of successes only: %+v", f.Latency)
	}
	// The snapshot is a copy.
	ep.Record("f", stats.ServerError, -3, 0)
	if s.Calls[1].Codes[1].Count != 2 {
		t.Error("snapshot shares its codes with the recorder")
	}
}

func TestMergeAndDelta(t *testing.T) {
	var a, b stats.Recorder
	a.Record("S", "f", "h:1", stats.OK, 0, time.Millisecond)
	b.Record("S", "f", "h:1", stats.OK, 0, 3*time.Millisecond)
	b.Record("S", "f", "h:1", stats.ServerError, -3, 0)
	b.Record("S", "f", "h:2", stats.QueueFull, 0, 0)
	pa, pb := a.Snapshot(), b.Snapshot()
	pa.Threads = []stats.NetThread{{Index: 1, Wakeups: 10, HandBacks: 4, Direct: 2, QueueDepth: 3}}
	pb.Threads = []stats.NetThread{{Index: 0, Wakeups: 5}}
	pa.Endpoints = []stats.Endpoint{{Thread: 1, Servant: "S", Endpoint: "h:1", Sent: 4, State: stats.StateConnected}}
	pb.Endpoints = []stats.Endpoint{{Thread: 0, Servant: "S", Endpoint: "h:1", Sent: 7}}

	m := stats.Merge(pa, pb)
	if len(m.Calls) != 2 {
		t.Fatalf("merged keys %d, want 2", len(m.Calls))
	}
	h1 := m.Calls[0]
	if h1.Endpoint != "h:1" || h1.Results[stats.OK] != 2 || h1.Latency.Min != time.Millisecond || h1.Latency.Max != 3*time.Millisecond || len(h1.Codes) != 1 {
		t.Errorf("merged h:1: %+v", h1)
	}
	if m.Threads[0].Index != 0 || m.Threads[1].Index != 1 || m.Endpoints[0].Thread != 0 {
		t.Errorf("merge order: threads %+v endpoints %+v", m.Threads, m.Endpoints)
	}
	if tot := m.Total(); tot.Calls() != 4 {
		t.Errorf("total calls %d, want 4", tot.Calls())
	}

	a.Record("S", "f", "h:1", stats.Timeout, 0, 0)
	pa2 := a.Snapshot()
	pa2.Threads = []stats.NetThread{{Index: 1, Wakeups: 25, HandBacks: 7, Direct: 3, QueueDepth: 1}}
	pa2.Endpoints = []stats.Endpoint{{Thread: 1, Servant: "S", Endpoint: "h:1", Sent: 9, State: stats.StateBackoff}}
	m2 := stats.Merge(pa2, pb)
	d := m2.Delta(m)
	if len(d.Calls) != 1 || d.Calls[0].Results[stats.Timeout] != 1 || d.Calls[0].Calls() != 1 {
		t.Fatalf("delta calls %+v", d.Calls)
	}
	if d.Threads[1].Wakeups != 15 || d.Threads[1].HandBacks != 3 || d.Threads[1].Direct != 1 || d.Threads[1].QueueDepth != 1 || d.Threads[0].Wakeups != 0 {
		t.Errorf("delta threads %+v", d.Threads)
	}
	if d.Endpoints[1].Sent != 5 || d.Endpoints[1].State != stats.StateBackoff {
		t.Errorf("delta endpoints %+v", d.Endpoints)
	}
	if empty := m2.Delta(m2); len(empty.Calls) != 0 {
		t.Errorf("delta of a snapshot with itself has calls: %+v", empty.Calls)
	}
}

func TestSharedIsSafeForConcurrentUse(t *testing.T) {
	var s stats.Shared
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 1000 {
				s.Record("S", "f", "", stats.QueueFull, 0, 0)
			}
		}()
	}
	for range 4 {
		<-done
	}
	snap := s.Snapshot()
	if len(snap.Calls) != 1 || snap.Calls[0].Results[stats.QueueFull] != 4000 {
		t.Fatalf("shared counted %+v", snap.Calls)
	}
}

func TestNames(t *testing.T) {
	if stats.QueueFull.String() != "queue_full" || stats.Result(200).String() != "unknown" || len(stats.Results()) != stats.NumResults {
		t.Error("result names")
	}
	if b, _ := stats.StateConnected.MarshalText(); string(b) != "connected" {
		t.Errorf("state text %q", b)
	}
}

// TestRecorderForget: Forget drops the pairs it is told to, and only those; a dropped pair's
// EndpointRecorder says so (Forgotten), and counting the pair again starts from zero, which
// Snapshot.Delta takes for a reset (all of the new counts are new).
func TestRecorderForget(t *testing.T) {
	var r stats.Recorder
	gone, kept := r.Endpoint("S", "a:1"), r.Endpoint("S", "b:1")
	for range 3 {
		gone.Record("f", stats.OK, 0, time.Millisecond)
		kept.Record("f", stats.OK, 0, time.Millisecond)
	}
	before := r.Snapshot()
	r.Forget(func(servant, endpoint string) bool { return servant == "S" && endpoint == "a:1" })
	if !gone.Forgotten() || kept.Forgotten() {
		t.Fatalf("Forgotten: dropped %v, kept %v; want true, false", gone.Forgotten(), kept.Forgotten())
	}
	s := r.Snapshot()
	if len(s.Calls) != 1 || s.Calls[0].Endpoint != "b:1" || s.Calls[0].Counters.Calls() != 3 {
		t.Fatalf("after Forget the snapshot holds %+v; want b:1 alone, with its 3 calls", s.Calls)
	}
	again := r.Endpoint("S", "a:1")
	if again == gone {
		t.Fatal("Endpoint returned the forgotten recorder")
	}
	again.Record("f", stats.OK, 0, time.Millisecond)
	d := r.Snapshot().Delta(before)
	for _, c := range d.Calls {
		if c.Endpoint == "a:1" && c.Counters.Calls() != 1 {
			t.Fatalf("delta of the pair counted again from zero: %d calls, want 1 (a reset)", c.Counters.Calls())
		}
	}
}
