package benchcpu

import (
	"testing"
	"time"
)

// TestUsedCountsWork: burning CPU makes Used grow, and it never goes back.
func TestUsedCountsWork(t *testing.T) {
	before := Used(t)
	deadline := time.Now().Add(50 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	after := Used(t)
	if after < before {
		t.Fatalf("Used went back: %v then %v", before, after)
	}
	// On a loaded machine the 50 ms of wall time may hold less CPU time: only require some.
	if after == before || x == 0 {
		t.Fatalf("Used did not grow over a busy loop: %v then %v", before, after)
	}
}
