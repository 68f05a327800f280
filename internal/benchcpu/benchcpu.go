package benchcpu

import (
	"syscall"
	"testing"
	"time"
)

// Used returns the user and system CPU time the process has used so far.
func Used(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Report reports the CPU time used since start, a value of Used, per op of b as cpu-ns/op. Call
// it once the timed loop is over (b.N is then the number of ops).
func Report(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(Used(b)-start)/float64(max(b.N, 1)), "cpu-ns/op")
}
