package servantproxy

import (
	"testing"
	"time"
)

// TestBackupBudgetSmallRatio: backup-budget accepts any fraction in 0..1 and promises
// "backups at most X% of eligible calls (plus a small burst)". deposit credits
// int64(ratio*1000) thousandths of a backup per eligible call, truncated: below 0.001 it credits
// nothing, so after the initial burst a servant never sends another backup, however many calls
// it makes (and 0.0015 earns as 0.001, a third less than set). The budget counts millionths now
// (it failed before).
func TestBackupBudgetSmallRatio(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		calls int
		want  int // backups the calls earn after the burst, at the ratio
	}{
		{0.0005, 10000, 5},
		{0.0015, 10000, 15},
	} {
		b := newBackup(time.Millisecond, tc.ratio, []string{"F"})
		for b.take() { // spend the initial burst
		}
		got := 0
		for range tc.calls {
			b.deposit()
			if b.take() {
				got++
			}
		}
		if got < tc.want-1 {
			t.Errorf("backup-budget %v: %d eligible calls after the burst earned %d backups; want about %d (ratio x calls)",
				tc.ratio, tc.calls, got, tc.want)
		}
	}
}
