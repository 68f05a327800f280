package objectproxy

import (
	"testing"
	"time"
)

// TestRetryBudget checks that the token bucket holds retries to the ratio of calls plus the
// per-second constant, whatever the failure rate.
func TestRetryBudget(t *testing.T) {
	tests := []struct {
		name          string
		ratio, perSec float64
		calls         int           // routed calls, each wanting a retry (a failing cluster)
		over          time.Duration // spread over this long
		wantMax       int           // retries allowed at most
		wantMin       int
	}{
		{name: "10% of calls", ratio: 0.1, perSec: 0, calls: 10000, over: time.Second, wantMin: 990, wantMax: 1011},
		{name: "20% plus 10/s", ratio: 0.2, perSec: 10, calls: 10000, over: 10 * time.Second, wantMin: 2000, wantMax: 2000 + 100 + 31},
		{name: "few calls still retry", ratio: 0.1, perSec: 10, calls: 10, over: 10 * time.Second, wantMin: 10, wantMax: 10},
		// With no per-second constant, nine calls at 10% have earned no retry (before, the bucket
		// started with one token whatever the constant).
		{name: "no constant, no free retry", ratio: 0.1, perSec: 0, calls: 9, over: time.Second, wantMin: 0, wantMax: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ObjectProxy{budget: newRetryBudget(Guard{RetryRatio: tt.ratio, RetryMin: tt.perSec})}
			step := int64(tt.over) / int64(tt.calls)
			now := int64(1)
			got := 0
			for range tt.calls {
				now += step
				o.budget.deposit()
				if o.budget.withdraw(now) {
					got++
				}
			}
			if got < tt.wantMin || got > tt.wantMax {
				t.Fatalf("retries = %d of %d, want %d..%d", got, tt.calls, tt.wantMin, tt.wantMax)
			}
			if r, d := o.RetryStats(); int(r) != got || int(r+d) != tt.calls {
				t.Fatalf("RetryStats = %d, %d", r, d)
			}
		})
	}
	var o ObjectProxy
	for range 100 {
		if !o.budget.withdraw(1) {
			t.Fatal("without a budget every retry goes")
		}
	}
}
