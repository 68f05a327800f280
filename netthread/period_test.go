package netthread

import (
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/stats"
)

// TestSnapshotEndingPeriodAbandoned: a SnapshotEndingPeriod that gives up on a busy loop leaves
// the recorder's period alone, though its task runs on the loop later: the next snapshot's
// period still holds the call made before (the stat report after a deferred one needs it).
// Without the claim the waiter and the loop race for, the late task would end the period and
// the call's latency would be in no report's extremes.
func TestSnapshotEndingPeriodAbandoned(t *testing.T) {
	h := newEcho(t)
	c, err := h.submit([]byte("one"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if c.Err != nil {
		t.Fatal(c.Err)
	}
	release := make(chan struct{})
	ran := make(chan struct{})
	h.th.Execute(func() { <-release })
	if _, err := h.th.SnapshotEndingPeriod(20 * time.Millisecond); !errors.Is(err, ErrStatsUnavailable) {
		t.Fatalf("a snapshot of a loop held by a task: err %v, want ErrStatsUnavailable", err)
	}
	close(release)
	h.th.Execute(func() { close(ran) }) // after the abandoned snapshot's task
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not run a task within 10 s of its release")
	}
	s, err := h.th.SnapshotEndingPeriod(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ok, period uint64
	for _, x := range s.Calls {
		ok += x.Results[stats.OK]
		period += x.Period.N
	}
	if ok != 1 || period != 1 {
		t.Errorf("after an abandoned snapshot: %d successes counted, %d in the period; want 1 and 1", ok, period)
	}
	s, err = h.th.SnapshotEndingPeriod(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range s.Calls {
		if x.Period.N != 0 {
			t.Errorf("%v: %d calls in the period after it ended, want 0", x.Key, x.Period.N)
		}
	}
}
