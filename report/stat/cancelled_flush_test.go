package stat_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// TestReportsCancelledFlushKeepsFirstBatch: a Flush whose ctx is already cancelled sends
// nothing (the proxy refuses a call whose ctx has ended before writing it). Flush's doc promises
// that with a cancelled ctx the batches not sent are kept for the next Flush (Close's final one).
// The first batch was never sent either, and is kept too now. Before, Flush kept only the
// batches after it: its entries, taken from the counters (prev moved on), reached the stat
// service by no report. The loop's own report can meet the same ctx: it runs after Close
// cancelled it when the ticker and stop are ready together, or when it waited for the mutex.
func TestReportsCancelledFlushKeepsFirstBatch(t *testing.T) {
	impl, prx := startSlowStat(t)
	impl.let() // answers every call at once
	var rec stats.Shared
	const n = 9
	for i := range n {
		rec.Record("Hello.Server.GreeterObj", fmt.Sprintf("function%02d", i), "127.0.0.1:1", stats.OK, 0, ms(1))
	}
	o := stat.Options{ModuleName: "Test.Client", FromClient: true, MaxReportSize: 500, Interval: time.Hour}
	r := stat.New(rec.Snapshot, prx, o)
	if b := stat.Messages(rec.Snapshot(), o, ""); len(b) != 3 {
		t.Fatalf("%d batches, the test needs 3", len(b))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.Logf("Flush with a cancelled ctx: %v", r.Flush(ctx))
	if err := r.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	impl.mu.Lock()
	defer impl.mu.Unlock()
	var missing []string
	for i := range n {
		fn := fmt.Sprintf("function%02d", i)
		if impl.fns[fn] != 1 {
			missing = append(missing, fmt.Sprintf("%s:%d", fn, impl.fns[fn]))
		}
	}
	if len(missing) != 0 {
		t.Errorf("after a Flush with a cancelled ctx (nothing sent) and Close, the stat service received %d calls; entries not reported exactly once (name:times): %v; "+
			"want each of the %d counted calls reported once by Close's final report", impl.calls, missing, n)
	}
}
