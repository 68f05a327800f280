package call

import (
	"errors"
	"testing"
)

// countingRecorder counts the calls a Recorder is told of.
type countingRecorder struct{ n int }

func (r *countingRecorder) RecordCall(*Call, error) { r.n++ }

// TestPairJoinAfterFirstCounted: the first call of a backup pair ends (a failure) just as the
// backup timer fires. It was the only half open, so it is counted, as the pair's outcome. The
// backup must then not be opened: Join refuses, and the pair is counted once. Before, the
// backup was opened anyway and counted again when it ended (two calls in Stats for one).
func TestPairJoinAfterFirstCounted(t *testing.T) {
	var rec countingRecorder
	p := new(Pair)
	c := Get()
	c.Rec, c.Pair, c.Notify = &rec, p, func(*Call) {}
	p.Open()
	c.Complete(errors.New("connection lost")) // on the loop, as the timer fires
	if p.Join() {
		t.Fatal("Join opened a backup after the first call had ended and been counted")
	}
	if rec.n != 1 || p.Counted() != c {
		t.Fatalf("the pair was counted %d times (half %p), want once, by the first call %p", rec.n, p.Counted(), c)
	}
	Put(c)

	// While the first is open, Join opens the backup, and the pair counts once whichever ends.
	rec.n = 0
	p = new(Pair)
	c, c2 := Get(), Get()
	for _, x := range []*Call{c, c2} {
		x.Rec, x.Pair, x.Notify = &rec, p, func(*Call) {}
	}
	p.Open()
	if !p.Join() {
		t.Fatal("Join refused a backup while the first call was open")
	}
	c.Complete(errors.New("timeout"))
	c2.Complete(nil)
	if rec.n != 1 || p.Counted() != c2 {
		t.Fatalf("the pair was counted %d times (half %p), want once, by the backup's reply %p", rec.n, p.Counted(), c2)
	}
	Put(c)
	Put(c2)
}

// TestPairUnsent: a backup that found no endpoint ends with ErrNoEndpoint while its first call is
// pending, and with the first call's failure once that one has failed (uncounted: the backup,
// ending last, carries the pair's outcome); a cancelled first call leaves ErrNoEndpoint.
func TestPairUnsent(t *testing.T) {
	var p Pair
	p.Open()
	first := Get()
	if !p.Join() {
		t.Fatal("Join with the first call open = false")
	}
	if err := p.Unsent(); err != ErrNoEndpoint {
		t.Fatalf("Unsent with the first call pending = %v, want ErrNoEndpoint", err)
	}
	if p.counts(first, ErrTimeout) {
		t.Fatal("the first call's failure counted while its backup is open")
	}
	if err := p.Unsent(); err != ErrTimeout {
		t.Fatalf("Unsent after the first call timed out = %v, want ErrTimeout", err)
	}
	Put(first)

	var q Pair
	q.Open()
	q.Join()
	q.counts(Get(), errAbandoned)
	if err := q.Unsent(); err != ErrNoEndpoint {
		t.Fatalf("Unsent after the first call was abandoned = %v, want ErrNoEndpoint", err)
	}
}
