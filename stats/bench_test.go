package stats_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/stats"
)

// BenchmarkRecord is the cost a net thread pays per finished call: one map lookup by function
// name on a kept EndpointRecorder, and the increments. It must not allocate.
func BenchmarkRecord(b *testing.B) {
	var r stats.Recorder
	ep := r.Endpoint("Hello.Server.GreeterObj", "127.0.0.1:18015")
	fns := []string{"SayHello", "SayBye", "Echo", "Ping"}
	for _, f := range fns {
		ep.Record(f, stats.OK, 0, time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ep.Record(fns[i&3], stats.OK, 0, time.Duration(i&1023)*time.Microsecond)
	}
}

// BenchmarkRecordByNames is the convenience path that looks the (servant, endpoint) pair up too.
func BenchmarkRecordByNames(b *testing.B) {
	var r stats.Recorder
	r.Record("Hello.Server.GreeterObj", "SayHello", "127.0.0.1:18015", stats.OK, 0, 0)
	b.ReportAllocs()
	for b.Loop() {
		r.Record("Hello.Server.GreeterObj", "SayHello", "127.0.0.1:18015", stats.OK, 0, 2*time.Millisecond)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	var r stats.Recorder
	ep := r.Endpoint("S", "h:1")
	ep.Record("f", stats.ServerError, -3, 0)
	n := testing.AllocsPerRun(1000, func() {
		ep.Record("f", stats.OK, 0, time.Millisecond)
		ep.Record("f", stats.ServerError, -3, 0)
		ep.Record("f", stats.Timeout, 0, 0)
	})
	if n != 0 {
		t.Fatalf("Record allocates %v times per call", n)
	}
}
