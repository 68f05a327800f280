package bufpool

import "testing"

func TestClasses(t *testing.T) {
	prev := 0
	for i := range pools {
		s := classSize(i)
		if s <= prev {
			t.Fatalf("class %d size %d not above previous %d", i, s, prev)
		}
		if got := classOf(s); got != i {
			t.Fatalf("classOf(classSize(%d)=%d) = %d", i, s, got)
		}
		if got := classOf(s + 1); i+1 < len(pools) && got != i+1 {
			t.Fatalf("classOf(%d) = %d, want %d", s+1, got, i+1)
		}
		if i > 0 && float64(s)/float64(prev) > 1.26 {
			t.Fatalf("class %d (%d) is %.2fx class %d", i, s, float64(s)/float64(prev), i-1)
		}
		prev = s
	}
	if classOf(classSize(len(pools)-1)+1) != -1 {
		t.Fatal("a buffer beyond the largest class must not be pooled")
	}
}

func TestGetPut(t *testing.T) {
	for _, n := range []int{0, 100, MinSize - 1, MinSize, MinSize + 1, 1 << 20, 8<<20 + 57, 10 << 20} {
		b := Get(n)
		if len(b) != 0 || cap(b) < n {
			t.Fatalf("Get(%d): len %d cap %d", n, len(b), cap(b))
		}
		if n >= MinSize && float64(cap(b)) > 1.26*float64(n) {
			t.Fatalf("Get(%d): cap %d wastes more than a class step", n, cap(b))
		}
		b = append(b, make([]byte, n)...)
		Put(b)
	}
	// A buffer of a size between classes serves the smaller class.
	odd := make([]byte, 0, 3<<20+12345)
	Put(odd)
	for range 4 { // the pool may drop it; whatever comes back must be big enough
		if b := Get(3<<20 + 12345); cap(b) < 3<<20+12345 {
			t.Fatalf("Get returned cap %d", cap(b))
		}
	}
}

// A frame around a round-sized body (the body, a header and the encoder's headroom) takes the
// class named after the body, not the next one, a quarter larger.
func TestRoundBodiesFitTheirClass(t *testing.T) {
	for _, body := range []int{MinSize, 1 << 20, 4 << 20, 8 << 20, 3 << 20, 5 << 20} {
		frame := body + 100 + 512 // a request's head and tail, and codec's growRoom
		if got := classSize(classOf(frame)); got != body+slack {
			t.Errorf("frame of %d bytes around a %d-byte body: class of %d bytes, want %d", frame, body, got, body+slack)
		}
		if b := Get(frame); cap(b) < frame {
			t.Errorf("Get(%d): cap %d", frame, cap(b))
		}
	}
}

// A buffer of at least MinSize but below the smallest class is dropped by Put, not filed under
// a class it cannot serve.
func TestPutBelowSmallestClass(t *testing.T) {
	Put(make([]byte, 0, MinSize))
	Put(make([]byte, 0, classSize(0)-1))
	for range 4 {
		if b := Get(MinSize + 1); cap(b) < MinSize+1 {
			t.Fatalf("Get(%d) returned cap %d", MinSize+1, cap(b))
		}
	}
}

func TestReuseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	Put(Get(1 << 20))
	allocs := testing.AllocsPerRun(100, func() {
		b := Get(1 << 20)
		Put(b)
	})
	if allocs > 0.1 {
		t.Fatalf("Get+Put of a pooled size allocated %.2f times per run", allocs)
	}
}

func BenchmarkGetPut1MiB(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Put(Get(1 << 20))
	}
}
