package future

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGetAfterComplete(t *testing.T) {
	f := Make[int]()
	if f.Done() {
		t.Fatal("new future is done")
	}
	if _, _, ok := f.Result(); ok {
		t.Fatal("Result of a pending future reports completion")
	}
	if !f.Complete(7, nil) {
		t.Fatal("first Complete returned false")
	}
	if f.Complete(8, errors.New("late")) {
		t.Fatal("second Complete returned true")
	}
	v, err := f.Get(context.Background())
	if v != 7 || err != nil {
		t.Fatalf("Get = %d, %v; want 7, nil", v, err)
	}
	if v, err, ok := f.Result(); v != 7 || err != nil || !ok {
		t.Fatalf("Result = %d, %v, %v", v, err, ok)
	}
}

func TestGetWaits(t *testing.T) {
	f := Make[string]()
	boom := errors.New("boom")
	go func() {
		time.Sleep(10 * time.Millisecond)
		f.Complete("x", boom)
	}()
	v, err := f.Get(context.Background())
	if v != "x" || err != boom {
		t.Fatalf("Get = %q, %v", v, err)
	}
}

func TestGetContext(t *testing.T) {
	f := Make[int]()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get under an expiring ctx: %v", err)
	}
	// The future is unaffected and still completes for later readers.
	f.Complete(3, nil)
	if v, err := f.Get(context.Background()); v != 3 || err != nil {
		t.Fatalf("Get after the ctx error = %d, %v", v, err)
	}
}

func TestOnDone(t *testing.T) {
	f := Make[int]()
	var got []int
	f.OnDone(func(v int, _ error) { got = append(got, v) })
	f.OnDone(func(v int, _ error) { got = append(got, v*10) })
	if len(got) != 0 {
		t.Fatal("callbacks ran before completion")
	}
	f.Complete(2, nil)
	f.OnDone(func(v int, _ error) { got = append(got, v*100) }) // runs at once
	if want := []int{2, 20, 200}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("callbacks saw %v, want %v", got, want)
	}
}

// A callback that panics does not keep the others from running (a WhenAll made before the
// completion is one of them); Complete panics afterwards with the first panic's value, and the
// future is complete.
func TestOnDonePanics(t *testing.T) {
	f := Make[int]()
	f.OnDone(func(int, error) { panic("first") })
	f.OnDone(func(int, error) { panic("second") })
	ran := 0
	f.OnDone(func(int, error) { ran++ })
	all := WhenAll(f)
	var p any
	func() {
		defer func() { p = recover() }()
		f.Complete(1, nil)
	}()
	if p != "first" {
		t.Errorf("Complete panicked with %v, want the first callback's panic", p)
	}
	if ran != 1 {
		t.Errorf("the callback after two panicking ones ran %d times, want 1", ran)
	}
	if n, err, done := all.Result(); !done || n != 0 || err != nil {
		t.Errorf("WhenAll(f) = %d, %v, done %v; want 0, nil, done", n, err, done)
	}
	if v, err, done := f.Result(); !done || v != 1 || err != nil {
		t.Errorf("f = %d, %v, done %v; want 1, nil, done", v, err, done)
	}
}

// The callbacks run on the goroutine that completes, and no goroutine is started.
func TestNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	fs := make([]*Future[int], 1000)
	for i := range fs {
		fs[i] = Make[int]()
		fs[i].OnDone(func(int, error) {})
	}
	all := WhenAll(awaitables(fs)...)
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after making 1000 futures and a WhenAll, %d before", n, before)
	}
	for i, f := range fs {
		f.Complete(i, nil)
	}
	if !all.Done() {
		t.Fatal("WhenAll not done after the last completion")
	}
}

func awaitables[T any](fs []*Future[T]) []Awaitable {
	out := make([]Awaitable, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

func TestWhenAllAndJoin(t *testing.T) {
	a, b, c := Make[int](), Make[string](), Make[struct{}]()
	all := WhenAll(a, b, c)
	e1, e2 := errors.New("b failed"), errors.New("c failed")
	c.Complete(struct{}{}, e2)
	a.Complete(1, nil)
	if all.Done() {
		t.Fatal("WhenAll done before every future completed")
	}
	b.Complete("", e1)
	n, err := all.Get(context.Background())
	if n != 2 || err != e1 {
		t.Fatalf("WhenAll = %d, %v; want 2 failures and the first in argument order (%v)", n, err, e1)
	}
	if err := Join(context.Background(), a); err != nil {
		t.Fatalf("Join of a successful future: %v", err)
	}
	if n, err := WhenAll().Get(context.Background()); n != 0 || err != nil {
		t.Fatalf("WhenAll() = %d, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Join(ctx, Make[int]()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Join under a cancelled ctx: %v", err)
	}
}

func TestReady(t *testing.T) {
	f := Ready(5, nil)
	if v, err := f.Get(context.Background()); v != 5 || err != nil || !f.Done() {
		t.Fatalf("Ready: %d, %v", v, err)
	}
}

// Concurrent waiters, callbacks and completers: each callback runs once, every Get returns the
// winner's value.
func TestConcurrent(t *testing.T) {
	for range 200 {
		f := Make[int]()
		var calls atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(2)
			go func() { defer wg.Done(); f.OnDone(func(int, error) { calls.Add(1) }) }()
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					f.Complete(1, nil)
				} else if v, _ := f.Get(context.Background()); v != 1 {
					t.Errorf("Get = %d", v)
				}
			}()
		}
		wg.Wait()
		if calls.Load() != 8 {
			t.Fatalf("%d callbacks ran, want 8", calls.Load())
		}
	}
}

func BenchmarkCompleteGet(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		f := Make[int]()
		f.OnDone(func(int, error) {})
		f.Complete(1, nil)
		_, _ = f.Get(context.Background())
	}
}
