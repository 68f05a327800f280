package lograte

import (
	"strconv"
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
	if n := len(l.keys); n != MaxKeys+1 {
		t.Errorf("%d entries, want MaxKeys + the shared one (%d)", n, MaxKeys+1)
	}
}
