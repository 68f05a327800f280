package stat_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// TestLongLatencySaturates: StatMicMsgBody's maxRspTime and minRspTime are int32 milliseconds:
// a success that took more than 2^31 ms (24.9 days: a call with a timeout of days, a long poll
// served under WithStats) is reported as math.MaxInt32, not wrapped around into a negative
// maximum (30 days used to read as about -1.7e9 ms, beside a totalRspTime of 30 days).
func TestLongLatencySaturates(t *testing.T) {
	var r stats.Recorder
	const long = 30 * 24 * time.Hour
	r.Record("App.Server.Obj", "Poll", "127.0.0.1:9000", stats.OK, 0, long)
	delta := r.Snapshot()
	msgs := stat.Messages(delta, stat.Options{ModuleName: "App.Client", FromClient: true}, "")
	if len(msgs) != 1 || len(msgs[0]) != 1 {
		t.Fatalf("messages %v", msgs)
	}
	for h, b := range msgs[0] {
		t.Logf("%s: count %d total %d ms max %d ms min %d ms", h.InterfaceName, b.Count, b.TotalRspTime, b.MaxRspTime, b.MinRspTime)
		if b.MaxRspTime < 0 || b.MinRspTime < 0 {
			t.Errorf("a success of %v is reported with maxRspTime %d ms and minRspTime %d ms (totalRspTime %d ms)",
				long, b.MaxRspTime, b.MinRspTime, b.TotalRspTime)
		}
	}
}
