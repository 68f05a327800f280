package call

import (
	"testing"
)

type expiry struct{ got []*Call }

func (e *expiry) Expire(c *Call) { e.got = append(e.got, c) }

func TestWheelExpiresAtDeadline(t *testing.T) {
	const tick = int64(10)
	tests := []struct {
		name     string
		deadline int64
		advance  []int64 // successive Advance times
		wantAt   int     // index into advance at which the call must have expired; -1: never
	}{
		{name: "due within first tick", deadline: 15, advance: []int64{14, 15}, wantAt: 1},
		{name: "later in same tick is not early", deadline: 19, advance: []int64{15, 18, 19}, wantAt: 2},
		{name: "far future waits extra turns", deadline: 10 * 1024 * 3, advance: []int64{10 * 1024, 10 * 1024 * 2, 10*1024*3 - 1, 10 * 1024 * 3}, wantAt: 3},
		{name: "already due", deadline: 1, advance: []int64{5, 11}, wantAt: 0},
		{name: "jump over many turns", deadline: 500, advance: []int64{1 << 40}, wantAt: 0},
		{name: "not yet", deadline: 1000, advance: []int64{990, 999}, wantAt: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWheel(tick, 0)
			e := &expiry{}
			c := &Call{Deadline: tt.deadline, Owner: e}
			w.Add(c)
			for i, now := range tt.advance {
				w.Advance(now)
				expired := len(e.got) == 1
				want := tt.wantAt >= 0 && i >= tt.wantAt
				if expired != want {
					t.Fatalf("after Advance(%d): expired=%v, want %v", now, expired, want)
				}
			}
			if w.Len() != 1-len(e.got) {
				t.Fatalf("Len() = %d, want %d", w.Len(), 1-len(e.got))
			}
		})
	}
}

func TestWheelRemove(t *testing.T) {
	w := NewWheel(10, 0)
	e := &expiry{}
	calls := make([]*Call, 5)
	for i := range calls {
		calls[i] = &Call{Deadline: 25, Owner: e} // all in one slot
		w.Add(calls[i])
	}
	w.Remove(calls[0]) // tail of the list
	w.Remove(calls[4]) // head
	w.Remove(calls[2]) // middle
	w.Remove(calls[2]) // twice is harmless
	if w.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", w.Len())
	}
	w.Advance(30)
	if len(e.got) != 2 || e.got[0] != calls[3] && e.got[0] != calls[1] {
		t.Fatalf("expired %v, want calls 1 and 3", e.got)
	}
	if w.Len() != 0 {
		t.Fatalf("Len() = %d after expiry, want 0", w.Len())
	}
}

func TestStackDrainIsFIFO(t *testing.T) {
	var s Stack
	if !s.Push(&Call{ID: 1}) {
		t.Fatal("first Push on an empty stack must report wasEmpty")
	}
	for i := int32(2); i <= 5; i++ {
		if s.Push(&Call{ID: i}) {
			t.Fatalf("Push %d reported empty", i)
		}
	}
	var got []int32
	for c := s.Drain(); c != nil; c = c.Next() {
		got = append(got, c.ID)
	}
	want := []int32{1, 2, 3, 4, 5}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if s.Drain() != nil {
		t.Fatal("second Drain not empty")
	}
}

func TestCompleteAbandonExactlyOnce(t *testing.T) {
	// A caller that abandons first makes Complete recycle the call.
	c := Get()
	if !c.AbandonGen(c.Gen()) {
		t.Fatal("AbandonGen of a pending call = false")
	}
	if c.Complete(nil) {
		t.Fatal("Complete after AbandonGen delivered the call")
	}
	// Complete first: AbandonGen and DropGen with the generation read before it fail, and the
	// done signal is there.
	c = Get()
	gen := c.Gen()
	if !c.Complete(ErrTimeout) {
		t.Fatal("Complete of a pending call did not deliver")
	}
	if c.AbandonGen(gen) {
		t.Fatal("AbandonGen after Complete = true")
	}
	if c.DropGen(gen) {
		t.Fatal("DropGen after Complete = true")
	}
	if c.Abandoned() {
		t.Fatal("a completed call reads as abandoned")
	}
	<-c.Done()
	if c.Err != ErrTimeout {
		t.Fatalf("Err = %v, want ErrTimeout", c.Err)
	}
	// Complete moved the call to its next generation; Put keeps it there, so that the next use
	// is gen+1 whichever way the call ended.
	Put(c)
	if c.Gen() != gen+1 || c.Abandoned() {
		t.Fatalf("after Complete and Put: generation %d (want %d), abandoned %v", c.Gen(), gen+1, c.Abandoned())
	}
	// An abandoned call recycled by Complete is in the next generation too.
	c = Get()
	gen = c.Gen()
	c.AbandonGen(gen)
	c.Complete(nil)
	if c.Gen() != gen+1 || c.Abandoned() || c.AbandonGen(gen) {
		t.Fatalf("after AbandonGen and Complete: generation %d (want %d), abandoned %v", c.Gen(), gen+1, c.Abandoned())
	}
}

// failing is an Owner whose Expire, like a connection closed by a timeout, takes every other
// call of the slot out and hands each to its caller, which recycles it at once on its own
// goroutine.
type failing struct {
	w       *Wheel
	others  []*Call
	expired []*Call
	done    chan struct{}
}

func (f *failing) Expire(c *Call) {
	f.expired = append(f.expired, c)
	for _, o := range f.others {
		if o != c && o.timerArmed {
			f.w.Remove(o)
			go func() { Put(o); f.done <- struct{}{} }() // the caller, done with it
		}
	}
}

// TestWheelExpireTakesOthersOut: when an expiry takes the calls after it out of the wheel and
// their callers recycle them, Advance touches none of them again (the race detector saw it
// read a recycled call's fields) and expires nothing twice.
func TestWheelExpireTakesOthersOut(t *testing.T) {
	w := NewWheel(10, 0)
	f := &failing{w: w, done: make(chan struct{}, 8)}
	for range 4 {
		c := Get()
		c.Deadline, c.Owner = 25, f
		w.Add(c)
		f.others = append(f.others, c)
	}
	w.Advance(30)
	for range 3 {
		<-f.done
	}
	if len(f.expired) != 1 || w.Len() != 0 {
		t.Fatalf("expired %d calls, %d left in the wheel; want 1 and 0", len(f.expired), w.Len())
	}
}
