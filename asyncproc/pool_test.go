package asyncproc

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/internal/call"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newPool(t *testing.T, o Options) *Pool {
	t.Helper()
	if o.Log == nil {
		o.Log = zaptest.NewLogger(t)
	}
	return New(o)
}

// blocker is a callback that holds its worker until release is closed.
type blocker struct {
	started chan struct{}
	release chan struct{}
}

func newBlocker(n int) *blocker {
	return &blocker{started: make(chan struct{}, n), release: make(chan struct{})}
}

func (b *blocker) call() *call.Call {
	return &call.Call{Finish: func(*call.Call) { b.started <- struct{}{}; <-b.release }}
}

// occupy reserves and delivers n blocking callbacks and waits until all n run.
func (b *blocker) occupy(t *testing.T, p *Pool, n int) {
	t.Helper()
	for range n {
		if err := p.Reserve(); err != nil {
			t.Fatal(err)
		}
		p.Deliver(b.call())
	}
	for range n {
		<-b.started
	}
}

func TestReserveBoundsTheWaitingCallbacks(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 3})
	defer p.Close()
	b := newBlocker(1)
	b.occupy(t, p, 1) // the worker is busy: what is delivered now waits

	// Calls in flight do not count against QueueCap: 10 reserved, none delivered.
	for i := range 10 {
		if err := p.Reserve(); err != nil {
			t.Fatalf("Reserve %d with no callback waiting: %v", i+1, err)
		}
	}
	var ran atomic.Int64
	for range 3 {
		p.Deliver(&call.Call{Finish: func(*call.Call) { ran.Add(1) }})
	}
	if got := p.Waiting(); got != 3 {
		t.Fatalf("Waiting() = %d, want 3", got)
	}
	if err := p.Reserve(); !errors.Is(err, call.ErrQueueFull) {
		t.Fatalf("Reserve with QueueCap callbacks waiting: %v, want ErrQueueFull", err)
	}
	// The other 7 reserved calls complete anyway: Deliver never blocks and never drops, even
	// beyond QueueCap.
	for range 7 {
		p.Deliver(&call.Call{Finish: func(*call.Call) { ran.Add(1) }})
	}
	if got := p.Waiting(); got != 10 {
		t.Fatalf("Waiting() = %d, want 10", got)
	}
	if got := p.Pending(); got != 11 {
		t.Fatalf("Pending() = %d, want 11 (10 waiting, 1 running)", got)
	}
	close(b.release)
	deadline := time.Now().Add(10 * time.Second)
	for p.Waiting() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := p.Reserve(); err != nil {
		t.Fatalf("Reserve once the queue drained: %v", err)
	}
	p.Release()
	p.Close()
	if got := ran.Load(); got != 10 {
		t.Fatalf("%d callbacks ran, want 10", got)
	}
}

func TestInFlightLimit(t *testing.T) {
	p := newPool(t, Options{Workers: 1, QueueCap: 100, InFlightLimit: 2})
	defer p.Close()
	for i := range 2 {
		if err := p.Reserve(); err != nil {
			t.Fatalf("Reserve %d of 2: %v", i+1, err)
		}
	}
	if err := p.Reserve(); !errors.Is(err, call.ErrQueueFull) {
		t.Fatalf("Reserve beyond the in-flight limit: %v, want ErrQueueFull", err)
	}
	p.Release()
	if err := p.Reserve(); err != nil {
		t.Fatalf("Reserve after Release: %v", err)
	}
	p.Release()
	p.Release()
}

// TestDeliverBeyondTheChannel delivers far more callbacks than the channel holds while the
// workers are blocked, from the one goroutine a net thread would use: Deliver must return at once
// every time, and every callback must run exactly once afterwards.
func TestDeliverBeyondTheChannel(t *testing.T) {
	const n = 3*maxChan + 17
	p := newPool(t, Options{Workers: 2, QueueCap: 1 << 20})
	b := newBlocker(2)
	b.occupy(t, p, 2)
	runs := make([]atomic.Int32, n)
	for range n {
		if err := p.Reserve(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for i := range n {
		p.Deliver(&call.Call{Finish: func(*call.Call) { runs[i].Add(1) }})
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("delivering %d callbacks to blocked workers took %v", n, took)
	}
	if got := p.Waiting(); got != n {
		t.Fatalf("Waiting() = %d, want %d", got, n)
	}
	close(b.release)
	p.Close()
	for i := range runs {
		if got := runs[i].Load(); got != 1 {
			t.Fatalf("callback %d ran %d times, want 1", i, got)
		}
	}
}

func TestDeliverRunsEachFinishOnceAndCloseDrains(t *testing.T) {
	p := newPool(t, Options{Workers: 3, QueueCap: 100})
	var ran atomic.Int64
	const n = 100
	for range n {
		if err := p.Reserve(); err != nil {
			t.Fatal(err)
		}
		p.Deliver(&call.Call{Finish: func(*call.Call) { ran.Add(1) }})
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
	p := newPool(t, Options{Workers: 1, QueueCap: 10, Log: zaptest.NewLogger(t, zaptest.Level(zapFatalOnly{}))})
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

// TestReserveRacesClose reserves and delivers from many goroutines while Close runs, many times
// over. A reservation that Close does not wait for would deliver into the closed queue (a panic)
// or run its callback after Close returned.
func TestReserveRacesClose(t *testing.T) {
	for attempt := range 200 {
		p := New(Options{Workers: 2, QueueCap: 1 << 20})
		var ok, ran atomic.Int64
		var afterClose atomic.Bool
		var lateRuns atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 8 {
			wg.Go(func() {
				defer func() {
					if r := recover(); r != nil {
						errs <- fmt.Errorf("Deliver panicked: %v", r)
					}
				}()
				for {
					if err := p.Reserve(); err != nil {
						if !errors.Is(err, call.ErrClosed) {
							errs <- err
						}
						return
					}
					ok.Add(1)
					runtime.Gosched()
					p.Deliver(&call.Call{Finish: func(*call.Call) {
						if afterClose.Load() {
							lateRuns.Add(1)
						}
						ran.Add(1)
					}})
				}
			})
		}
		time.Sleep(time.Duration(attempt%10) * 10 * time.Microsecond)
		p.Close()
		afterClose.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if lateRuns.Load() != 0 || ran.Load() != ok.Load() {
			t.Fatalf("attempt %d: %d reservations, %d callbacks ran, %d after Close returned", attempt, ok.Load(), ran.Load(), lateRuns.Load())
		}
	}
}

// TestCloseFromCallback calls Close from a callback while other callbacks wait and the other
// worker runs one: Close returns inside the callback once the others ran, none runs after it,
// and the workers exit (TestMain checks) once the callback returns.
func TestCloseFromCallback(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			p := newPool(t, Options{Workers: workers, QueueCap: 100})
			b := newBlocker(1)
			if workers > 1 {
				b.occupy(t, p, 1) // the other worker is busy until released
			}
			var ran, late atomic.Int64
			var closed atomic.Bool
			closeReturned := make(chan struct{})
			callbackDone := make(chan struct{})
			if err := p.Reserve(); err != nil {
				t.Fatal(err)
			}
			const n = 20
			for range n {
				if err := p.Reserve(); err != nil {
					t.Fatal(err)
				}
			}
			p.Deliver(&call.Call{Finish: func(*call.Call) {
				defer close(callbackDone)
				go func() { time.Sleep(20 * time.Millisecond); close(b.release) }()
				p.Close()
				closed.Store(true)
				close(closeReturned)
			}})
			for range n {
				p.Deliver(&call.Call{Finish: func(*call.Call) {
					if closed.Load() {
						late.Add(1)
					}
					ran.Add(1)
				}})
			}
			select {
			case <-closeReturned:
			case <-time.After(10 * time.Second):
				t.Fatal("Close called from a callback did not return")
			}
			if got := ran.Load(); got != n {
				t.Fatalf("%d callbacks had run when Close returned in a callback, want %d", got, n)
			}
			<-callbackDone
			p.Close() // from outside, after: returns once the calling worker exited
			if late.Load() != 0 {
				t.Fatalf("%d callbacks ran after Close returned", late.Load())
			}
			if err := p.Reserve(); !errors.Is(err, call.ErrClosed) {
				t.Fatalf("Reserve after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestCloseFromTwoCallbacks has two callbacks on two workers call Close at once, and a queued
// callback that calls Close from inside the Close that runs it: none waits for another forever.
func TestCloseFromTwoCallbacks(t *testing.T) {
	p := newPool(t, Options{Workers: 2, QueueCap: 100})
	var both sync.WaitGroup
	both.Add(2)
	returned := make(chan struct{}, 3)
	closer := func(*call.Call) {
		both.Done()
		both.Wait() // both callbacks are running before either closes
		p.Close()
		returned <- struct{}{}
	}
	for range 3 {
		if err := p.Reserve(); err != nil {
			t.Fatal(err)
		}
	}
	p.Deliver(&call.Call{Finish: closer})
	p.Deliver(&call.Call{Finish: closer})
	p.Deliver(&call.Call{Finish: func(*call.Call) { p.Close(); returned <- struct{}{} }})
	for i := range 3 {
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 3 Close calls from callbacks returned", i)
		}
	}
	p.Close()
}

func TestGoid(t *testing.T) {
	a := goid()
	ch := make(chan uint64)
	go func() { ch <- goid() }()
	b := <-ch
	if a == 0 || b == 0 || a == b {
		t.Fatalf("goid() = %d here and %d on another goroutine, want two different non-zero ids", a, b)
	}
	if again := goid(); again != a {
		t.Fatalf("goid() changed on the same goroutine: %d then %d", a, again)
	}
}
