package asyncproc

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/internal/call"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReserveBoundsTheQueue(t *testing.T) {
	p := New(1, 3, zaptest.NewLogger(t))
	defer p.Close()
	for i := range 3 {
		if err := p.Reserve(); err != nil {
			t.Fatalf("Reserve %d of 3: %v", i+1, err)
		}
	}
	if err := p.Reserve(); !errors.Is(err, call.ErrQueueFull) {
		t.Fatalf("Reserve beyond capacity: %v, want ErrQueueFull", err)
	}
	p.Release()
	if err := p.Reserve(); err != nil {
		t.Fatalf("Reserve after Release: %v", err)
	}
	if got := p.Pending(); got != 3 {
		t.Fatalf("Pending() = %d, want 3", got)
	}
	for range 3 {
		p.Release()
	}
}

func TestDeliverRunsEachFinishOnceAndCloseDrains(t *testing.T) {
	p := New(3, 100, zaptest.NewLogger(t))
	var ran atomic.Int64
	var wg sync.WaitGroup
	const n = 100
	for range n {
		if err := p.Reserve(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		c := &call.Call{Finish: func(*call.Call) { ran.Add(1); wg.Done() }}
		p.Deliver(c)
	}
	p.Close()
	if got := ran.Load(); got != n {
		t.Fatalf("after Close %d finishers ran, want %d", got, n)
	}
	if got := p.Pending(); got != 0 {
		t.Fatalf("Pending() after Close = %d, want 0", got)
	}
	p.Close() // twice is harmless
	if err := p.Reserve(); !errors.Is(err, call.ErrClosed) {
		t.Fatalf("Reserve after Close: %v, want ErrClosed", err)
	}
}

func TestPanickingCallbackDoesNotKillWorker(t *testing.T) {
	p := New(1, 10, zaptest.NewLogger(t, zaptest.Level(zapFatalOnly{})))
	defer p.Close()
	done := make(chan struct{})
	_ = p.Reserve()
	p.Deliver(&call.Call{Finish: func(*call.Call) { panic("boom") }})
	_ = p.Reserve()
	p.Deliver(&call.Call{Finish: func(*call.Call) { close(done) }})
	<-done
	if got := p.Panics(); got != 1 {
		t.Fatalf("Panics() = %d, want 1", got)
	}
}
