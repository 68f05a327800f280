package lograte

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAllowOncePerInterval: the first line of a key is allowed, the next ones within the
// interval are refused and counted, and the first allowed after it reports them; keys are apart.
func TestAllowOncePerInterval(t *testing.T) {
	l := &Limiter{Every: 50 * time.Millisecond}
	if ok, left := l.Allow("a"); !ok || left != 0 {
		t.Fatalf("first line of a: allowed %v, left %d; want allowed, 0", ok, left)
	}
	start := time.Now()
	refused := 0
	for range 5 {
		if ok, _ := l.Allow("a"); !ok {
			refused++
		}
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Error("the first line of b was refused: keys share no interval")
	}
	if time.Since(start) < 50*time.Millisecond && refused != 5 {
		t.Fatalf("%d of 5 lines of a refused within the interval, want 5", refused)
	}
	time.Sleep(60 * time.Millisecond)
	ok, left := l.Allow("a")
	if !ok || left != uint64(refused) {
		t.Errorf("a after the interval: allowed %v, left %d; want allowed, %d", ok, left, refused)
	}
}

// TestAllowBounded: past MaxKeys keys, none of them stale, a new key shares one entry: the map
// stays bounded, and the new keys are still limited together.
func TestAllowBounded(t *testing.T) {
	l := &Limiter{Every: time.Hour}
	for i := range MaxKeys {
		if ok, _ := l.Allow(strconv.Itoa(i)); !ok {
			t.Fatalf("first line of key %d refused", i)
		}
	}
	if ok, _ := l.Allow("new-1"); !ok {
		t.Fatal("the first key past MaxKeys was refused; want it allowed (the shared entry's first)")
	}
	if ok, _ := l.Allow("new-2"); ok {
		t.Error("a second key past MaxKeys was allowed within the interval; want it limited with the first")
	}
	if n := len(l.clocks); n != MaxKeys+1 {
		t.Errorf("%d entries, want MaxKeys + the shared one (%d)", n, MaxKeys+1)
	}
}

// TestClockShared: the Clock a Limiter gives for a key is the one its Allow asks, and many
// goroutines asking it within one interval get one line between them, the others counted and
// reported with the next line allowed.
func TestClockShared(t *testing.T) {
	l := &Limiter{Every: time.Hour}
	c := l.Clock("ep")
	if l.Clock("ep") != c {
		t.Fatal("two Clocks for one key")
	}
	const goroutines, each = 8, 100
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				if ok, _ := c.Allow(); ok {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 1 {
		t.Fatalf("%d lines allowed within one interval by %d goroutines, want 1", n, goroutines)
	}
	if ok, _ := l.Allow("ep"); ok {
		t.Fatal("Limiter.Allow allowed a line its key's Clock had just allowed")
	}
	c.last.Store(nanotime() - int64(2*time.Hour)) // the interval is over
	if ok, left := c.Allow(); !ok || left != goroutines*each {
		t.Fatalf("after the interval: allowed %v, left %d; want allowed, %d", ok, left, goroutines*each)
	}
}

// TestClockStaleDropped: a full Limiter drops the keys not seen for ten intervals, so a new key
// gets a Clock of its own, while the holder of a dropped key's Clock keeps limiting with it.
func TestClockStaleDropped(t *testing.T) {
	l := &Limiter{Every: time.Millisecond}
	held := l.Clock("0")
	held.Allow()
	for i := 1; i < MaxKeys; i++ {
		l.Allow(strconv.Itoa(i))
	}
	time.Sleep(20 * time.Millisecond)
	fresh := l.Clock("new")
	if n := len(l.clocks); n != 1 {
		t.Fatalf("%d keys after a new one came to a full Limiter of stale keys, want 1", n)
	}
	if fresh == held || fresh == l.clocks[overflow] {
		t.Fatal("the new key did not get a Clock of its own")
	}
	if ok, _ := held.Allow(); !ok {
		t.Fatal("a dropped key's held Clock refused a line after its interval")
	}
	if ok, _ := held.Allow(); ok {
		t.Fatal("a dropped key's held Clock allowed two lines in one interval")
	}
}
