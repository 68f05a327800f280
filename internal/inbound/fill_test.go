package inbound

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// fillConn is a chunkConn without a socket that fills a frame's buffer itself, as
// tlsconn.LoopConn does: once given a sink, it puts the bytes that arrive next there first.
type fillConn struct {
	chunkConn
	sink   []byte
	sunk   int
	filled int // bytes put straight into sinks
}

func (c *fillConn) Fd() int { return -1 }

func (c *fillConn) Fill(p []byte) { c.sink, c.sunk = p, 0 }

func (c *fillConn) Filled() int {
	n := c.sunk
	c.sink, c.sunk = nil, 0
	return n
}

// arrive delivers b: into the sink while it has room and nothing is buffered, then buffered.
func (c *fillConn) arrive(b []byte) {
	if len(c.sink) > 0 && len(c.buf) == 0 {
		n := copy(c.sink, b)
		c.sink, c.sunk, c.filled = c.sink[n:], c.sunk+n, c.filled+n
		b = b[n:]
	}
	c.buf = append(c.buf, b...)
}

// TestFillerGetsTheRestOfLargeFrames streams large and small frames in random chunks to a
// connection that fills sinks: every frame comes out whole and in order, the rest of each large
// frame goes through the sink rather than Read, and Reset takes the sink back.
func TestFillerGetsTheRestOfLargeFrames(t *testing.T) {
	frames := [][]byte{frame(200<<10, 1), frame(10, 2), frame(64<<10, 3), frame(70<<10, 4), frame(300, 5), frame(1<<20, 6)}
	var stream []byte
	for _, f := range frames {
		stream = append(stream, f...)
	}
	var a Assembler
	c := &fillConn{}
	rng := rand.New(rand.NewPCG(3, 4))
	var got [][]byte
	for len(stream) > 0 {
		k := min(1+rng.IntN(48<<10), len(stream))
		c.arrive(stream[:k])
		stream = stream[k:]
		f, _ := drain(t, &a, c)
		got = append(got, f...)
	}
	if len(got) != len(frames) {
		t.Fatalf("%d frames, want %d", len(got), len(frames))
	}
	for i := range got {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if c.filled == 0 {
		t.Fatal("no byte went through a sink: the rest of large frames was copied by Read")
	}

	// An incomplete frame whose rest is the connection's to fill: Reset takes the sink back.
	c.arrive(frame(1<<20, 7)[:1000])
	if f, _, err := a.Next(c); f != nil || err != nil {
		t.Fatalf("an incomplete frame: %v %v", f, err)
	}
	if len(c.sink) != 1<<20-1000 {
		t.Fatalf("sink of %d bytes, want the frame's missing %d", len(c.sink), 1<<20-1000)
	}
	a.Reset()
	if c.sink != nil {
		t.Fatal("Reset left the connection a sink into a released buffer")
	}
}
