package asyncproc

import (
	"context"
	"testing"
	"time"
)

// TestStandInStaysForTheCallback: with Workers 1, a callback A waits in turn for 20 futures,
// each completed by a callback C_i that A queued just before (a call's future, got in a loop).
// One stand-in runs every C_i: it stays while A runs, so each wait after the first finds it
// ready. Before, the stand-in left as soon as a wait ended, and each of the 20 waits lent a new
// one after its own lendAfter (1 ms): a callback's N Gets in a row on a full pool took N ms at
// least.
func TestStandInStaysForTheCallback(t *testing.T) {
	const n = 20
	p := newPool(t, Options{Workers: 1, QueueCap: 8})
	defer p.Close()
	ranOn := make([]uint64, n)
	aDone := make(chan struct{})
	deliver(t, p, func() { // A
		defer close(aDone)
		for i := range n {
			done := make(chan struct{})
			deliver(t, p, func() { // C_i
				ranOn[i] = goid()
				close(done)
			})
			if err := p.Wait(context.Background(), done); err != nil {
				t.Errorf("wait %d: %v", i, err)
				return
			}
		}
	})
	select {
	case <-aDone:
	case <-time.After(10 * time.Second):
		t.Fatal("A's waits did not end")
	}
	standIns := map[uint64]bool{}
	for _, id := range ranOn {
		standIns[id] = true
	}
	if len(standIns) != 1 {
		t.Fatalf("a one-worker pool's callback waited for %d futures in turn: their callbacks ran on %d goroutines; "+
			"want 1, the stand-in its worker lent, staying while the callback runs", n, len(standIns))
	}
}
