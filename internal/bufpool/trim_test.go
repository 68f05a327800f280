package bufpool

import (
	"runtime"
	"testing"
	"time"
)

// trimsEvery gives back every kept buffer, so that a test starts from nothing, and spaces the
// trims that follow collections by d until the returned function runs (an hour: the test's own
// calls to trim are the only ones).
func trimsEvery(d time.Duration) (restore func()) {
	emptyKept()
	kept.mu.Lock()
	was := trimEvery
	trimEvery = d
	kept.mu.Unlock()
	return func() {
		emptyKept()
		kept.mu.Lock()
		trimEvery = was
		kept.mu.Unlock()
	}
}

// emptyKept gives back every kept buffer.
func emptyKept() {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	for i := range kept.bufs {
		clear(kept.bufs[i])
		kept.bufs[i] = kept.bufs[i][:0]
		kept.low[i] = 0
	}
	kept.bytes = 0
}

// keptIn returns how many buffers class i keeps, and the kept bytes of all classes.
func keptIn(i int) (n, bytes int) {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	return len(kept.bufs[i]), kept.bytes
}

// A class nobody takes from gives back half of what it kept at each trim after the first (which
// only records what it holds), down to nothing; the bytes are accounted for.
func TestTrimGivesBackIdleBuffers(t *testing.T) {
	defer trimsEvery(time.Hour)()
	i := classOf(1 << 20)
	size := classSize(i)
	bufs := make([][]byte, 10)
	for k := range bufs {
		bufs[k] = make([]byte, 0, size)
		if !keep(i, bufs[k]) {
			t.Fatalf("buffer %d not kept", k)
		}
	}
	for step, want := range []int{10, 5, 2, 1, 0, 0} {
		trim()
		n, bytes := keptIn(i)
		if n != want || bytes != want*size {
			t.Fatalf("after trim %d: %d buffers, %d bytes; want %d, %d", step+1, n, bytes, want, want*size)
		}
	}
	// The newest buffers stay longest: the ones given back are the bottom of the stack.
	for k := range 5 {
		keep(i, bufs[k])
	}
	trim()
	trim()
	if b := take(i); cap(b) != size || &b[:1][0] != &bufs[4][:1][0] {
		t.Fatal("trim gave back the most recently kept buffer, not the oldest")
	}
}

// A class whose buffers are taken and put back between trims keeps them: only what stayed in
// the class the whole time is idle.
func TestTrimKeepsBuffersInUse(t *testing.T) {
	defer trimsEvery(time.Hour)()
	i := classOf(8 << 20)
	for range 6 {
		keep(i, make([]byte, 0, classSize(i)))
	}
	trim() // records 6
	for range 5 {
		// Four buffers out and back: two of the six never moved.
		var out [][]byte
		for range 4 {
			out = append(out, take(i))
		}
		for _, b := range out {
			keep(i, b)
		}
		trim()
		if n, _ := keptIn(i); n < 4 {
			t.Fatalf("a class cycling through 4 buffers was trimmed to %d", n)
		}
	}
	if n, _ := keptIn(i); n != 4 {
		t.Fatalf("class keeps %d buffers, want the 4 in use", n)
	}
}

// Bytes a class no longer needs go, at the next trims, to the class in use: one that filled the
// pool's bytes does not keep another out for good.
func TestTrimFreesRoomForAnotherClass(t *testing.T) {
	defer trimsEvery(time.Hour)()
	big, small := classOf(16<<20), classOf(1<<20)
	for keep(big, make([]byte, 0, classSize(big))) {
	}
	for keep(small, make([]byte, 0, classSize(small))) {
	}
	before, _ := keptIn(small)
	for range 8 {
		// The small class is in use: every buffer it keeps goes out and comes back.
		n, _ := keptIn(small)
		out := make([][]byte, n)
		for k := range out {
			out[k] = take(small)
		}
		for _, b := range out {
			keep(small, b)
		}
		trim()
	}
	if !keep(small, make([]byte, 0, classSize(small))) {
		t.Fatalf("the pool's bytes stay full after the big class went idle (the small class keeps %d)", before)
	}
	if n, _ := keptIn(big); n != 0 {
		t.Fatalf("the idle big class still keeps %d buffers", n)
	}
}

// The trim runs by itself after garbage collections: buffers nobody takes are given back
// without any call into the package. (Its interval is shortened here: trimEvery between trims.)
func TestTrimRunsAfterCollections(t *testing.T) {
	defer trimsEvery(time.Millisecond)()
	i := classOf(2 << 20)
	for range 4 {
		keep(i, make([]byte, 0, classSize(i)))
	}
	deadline := time.Now().Add(10 * time.Second) // a liveness bound: cleanups run soon after a cycle
	for {
		if n, _ := keptIn(i); n == 0 {
			return
		}
		if time.Now().After(deadline) {
			n, _ := keptIn(i)
			t.Fatalf("%d idle buffers still kept after collections for 10 s", n)
		}
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
}
