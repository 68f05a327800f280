package inbound

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// deliver appends each piece to c in turn and runs a to exhaustion after each, as OnTraffic
// does. It returns the frames (owned ones as handed over) and checks after every piece that an
// incomplete frame's buffer holds at most about twice the bytes received: it grows with them.
func deliver(t *testing.T, a *Assembler, c *chunkConn, pieces [][]byte) (frames [][]byte, owned []bool) {
	t.Helper()
	for _, p := range pieces {
		c.buf = append(c.buf, p...)
		f, own := drain(t, a, c)
		frames, owned = append(frames, f...), append(owned, own...)
		checkGrowing(t, a)
	}
	return frames, owned
}

// drain runs a on c until no frame is complete, as OnTraffic does, and returns the frames:
// those handed over as they are, copies of the views.
func drain(t *testing.T, a *Assembler, c Conn) (frames [][]byte, owned []bool) {
	t.Helper()
	for {
		f, own, err := a.Next(c)
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			return frames, owned
		}
		if !own {
			f = bytes.Clone(f)
		}
		frames, owned = append(frames, f), append(owned, own)
	}
}

// checkGrowing fails if a assembles a growing frame in a buffer much larger than what it got.
func checkGrowing(t *testing.T, a *Assembler) {
	t.Helper()
	if a.length > 0 && a.reserved == 0 && cap(a.frame) > 3*max(a.got, bufpool.MinSize) {
		t.Fatalf("a growing frame holds a %d-byte buffer for %d bytes received", cap(a.frame), a.got)
	}
}

// split cuts b into pieces: a first one of head bytes, then pieces of random sizes up to most.
func split(b []byte, head, most int, rng *rand.Rand) [][]byte {
	pieces := [][]byte{b[:head]}
	for b = b[head:]; len(b) > 0; {
		n := min(1+rng.IntN(most), len(b))
		pieces, b = append(pieces, b[:n]), b[n:]
	}
	return pieces
}

// TestBudgetTooSmallGrows assembles frames larger than the budget, in many small pieces and in
// a header followed by one large piece: each comes out whole, owned and of its length, reserves
// nothing, and is counted as grown.
func TestBudgetTooSmallGrows(t *testing.T) {
	const n = 4 << 20
	rng := rand.New(rand.NewPCG(5, 6))
	big := frame(n, 3)
	for _, tc := range []struct {
		name   string
		pieces [][]byte
	}{
		{"small pieces", split(big, 104, 16<<10, rng)},
		{"one large piece", [][]byte{big[:104], big[104:]}},
		{"growing pieces", [][]byte{big[:100<<10], big[100<<10 : 150<<10], big[150<<10 : 3<<20], big[3<<20:]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(1 << 20)
			a := Assembler{Max: 8 << 20, Budget: b}
			c := &chunkConn{}
			frames, owned := deliver(t, &a, c, tc.pieces)
			if len(frames) != 1 || !owned[0] || len(frames[0]) != n || !bytes.Equal(frames[0], big) {
				t.Fatalf("%d frames; want the %d-byte frame, owned and intact", len(frames), n)
			}
			if b.Reserved() != 0 || b.Grown() != 1 {
				t.Fatalf("reserved %d, grown %d; want 0 and 1", b.Reserved(), b.Grown())
			}
			if c.copied != n {
				t.Fatalf("%d bytes read from the connection for a %d-byte frame", c.copied, n)
			}
			bufpool.Put(frames[0])
		})
	}
}

// TestBudgetReserves: a frame the budget can take is assembled in a buffer of its whole length,
// reserved until it is handed over or dropped; a second frame that would pass the budget grows.
func TestBudgetReserves(t *testing.T) {
	const n = 1 << 20
	b := NewBudget(n + n/2)
	a1 := Assembler{Budget: b}
	a2 := Assembler{Budget: b}
	f1, f2 := frame(n, 1), frame(n, 2)
	c1, c2 := &chunkConn{}, &chunkConn{}
	deliver(t, &a1, c1, [][]byte{f1[:1000]})
	if b.Reserved() != n || len(a1.frame) != n {
		t.Fatalf("reserved %d, buffer %d: want the whole frame, %d", b.Reserved(), len(a1.frame), n)
	}
	deliver(t, &a2, c2, [][]byte{f2[:1000]})
	if b.Reserved() != n || b.Grown() != 1 || len(a2.frame) >= n {
		t.Fatalf("reserved %d, grown %d, buffer %d: the second frame must grow", b.Reserved(), b.Grown(), len(a2.frame))
	}
	frames, owned := deliver(t, &a1, c1, [][]byte{f1[1000:]})
	if len(frames) != 1 || !owned[0] || !bytes.Equal(frames[0], f1) {
		t.Fatal("the reserved frame did not come out whole and owned")
	}
	if b.Reserved() != 0 {
		t.Fatalf("reserved %d after the frame was handed over", b.Reserved())
	}
	bufpool.Put(frames[0])

	// Reset releases the reservation of a frame and the buffer of a growing one.
	deliver(t, &a1, c1, [][]byte{f1[:1000]})
	if b.Reserved() != n {
		t.Fatalf("reserved %d, want %d", b.Reserved(), n)
	}
	a1.Reset()
	a2.Reset()
	if b.Reserved() != 0 {
		t.Fatalf("reserved %d after Reset", b.Reserved())
	}
	if got, l := a2.Assembling(); got != 0 || l != 0 || a2.frame != nil {
		t.Fatalf("after Reset: assembling %d/%d", got, l)
	}
}

// TestFillerInGrowingFrames streams frames larger than the budget to a connection that fills
// sinks (TLS): every frame comes out whole, and every sink is the free part of the frame's
// current buffer, never of one given back to the pool.
func TestFillerInGrowingFrames(t *testing.T) {
	frames := [][]byte{frame(3<<20, 1), frame(10, 2), frame(200<<10, 3), frame(1<<20, 4)}
	var stream []byte
	for _, f := range frames {
		stream = append(stream, f...)
	}
	b := NewBudget(100 << 10)
	a := Assembler{Budget: b}
	c := &fillConn{}
	rng := rand.New(rand.NewPCG(7, 8))
	var got [][]byte
	for len(stream) > 0 {
		k := min(1+rng.IntN(96<<10), len(stream))
		c.arrive(stream[:k])
		stream = stream[k:]
		f, _ := drain(t, &a, c)
		got = append(got, f...)
		checkGrowing(t, &a)
		if c.sink != nil && (a.got >= len(a.frame) || &c.sink[0] != &a.frame[a.got] || len(c.sink) != len(a.frame)-a.got) {
			t.Fatalf("a sink of %d bytes that is not the free part of the frame's buffer (%d/%d)", len(c.sink), a.got, len(a.frame))
		}
	}
	if len(got) != len(frames) {
		t.Fatalf("%d frames, want %d", len(got), len(frames))
	}
	for i := range got {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if c.filled == 0 || b.Grown() != 3 || b.Reserved() != 0 {
		t.Fatalf("filled %d, grown %d, reserved %d: want sinks used, 3 grown, nothing reserved", c.filled, b.Grown(), b.Reserved())
	}
}
