package netthread

import (
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestIdleLoopSleepsBetweenChores: a net thread with a connection and no call waiting is woken
// for the connections' chores only (every choreInterval), not every check interval, and its
// ticker sleeps between them; a call that enters the empty wheel wakes the ticker (the turn that
// routed it clears tickerAsleep), and a call the server holds still times out.
// Before, the loop took one ticker turn per check interval: a hundred a second per thread, for
// nothing to expire (an idle Communicator of 4 net threads with a server in the same process
// used ~10% of a core; ~2% now).
func TestIdleLoopSleepsBetweenChores(t *testing.T) {
	h := newHeld(t)
	if h.th.opts.CheckInterval != 10*time.Millisecond {
		t.Fatalf("check interval %v, want the default 10ms", h.th.opts.CheckInterval)
	}
	onLoop := func(fn func()) {
		done := make(chan struct{})
		h.th.Execute(func() { fn(); close(done) })
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the loop did not run a task within 10 s")
		}
	}
	c, err := h.submit([]byte("one"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-h.started
	h.release <- struct{}{}
	<-c.Done()
	if c.Err != nil {
		t.Fatal(c.Err)
	}
	var before, after uint64
	onLoop(func() { before = h.th.tickTurns })
	start := time.Now()
	time.Sleep(time.Second)
	onLoop(func() { after = h.th.tickTurns })
	idle := time.Since(start)
	if most := uint64(idle/choreInterval) + 3; after-before > most {
		t.Errorf("an idle thread's loop took %d ticker turns in %v, want at most %d (its chores only)", after-before, idle.Round(time.Millisecond), most)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !h.th.tickerAsleep.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the ticker of an idle thread was not asleep within 10 s")
		}
		time.Sleep(time.Millisecond)
	}

	held, err := h.submit([]byte("held"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-h.started // written: in the wheel, awaiting its reply
	var inWheel int
	var asleep bool
	onLoop(func() { inWheel, asleep = h.th.wheel.Len(), h.th.tickerAsleep.Load() })
	if inWheel != 1 || asleep {
		t.Errorf("a call in the wheel: wheel holds %d, ticker asleep %v; want 1, false (the turn that routed it woke the ticker)", inWheel, asleep)
	}
	c, err = h.submit([]byte("late"), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a call with a 300 ms timeout to a silent server had not ended after 10 s")
	}
	if !errors.Is(c.Err, call.ErrTimeout) {
		t.Errorf("a call the server held ended with %v, want ErrTimeout", c.Err)
	}
	h.release <- struct{}{} // the held call's handler and the late one's, in either order
	h.release <- struct{}{}
	<-held.Done()
	if held.Err != nil {
		t.Errorf("the held call, released: %v", held.Err)
	}
}
