package inbound

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// chunkConn is gnet.Conn's inbound API over one chunk of bytes per OnTraffic, with gnet's
// semantics: bytes left unconsumed when the callback returns are kept for the next callback.
// It counts the bytes copied out of it, which is what the Assembler promises to keep linear.
// The Assembler's real use, on gnet connections over TCP, is tested by the adapterproxy and
// server suites.
type chunkConn struct {
	buf    []byte // unconsumed bytes: what gnet holds in its ring buffer plus the last read
	copied int    // bytes copied out by Peek across the boundary and by Read
	peeked int    // bytes returned by Peek
}

func (c *chunkConn) InboundBuffered() int { return len(c.buf) }

func (c *chunkConn) Peek(n int) ([]byte, error) {
	if n > len(c.buf) {
		return nil, io.ErrShortBuffer
	}
	c.peeked += n
	return c.buf[:n], nil
}

func (c *chunkConn) Discard(n int) (int, error) {
	n = min(n, len(c.buf))
	c.buf = c.buf[n:]
	return n, nil
}

func (c *chunkConn) Read(p []byte) (int, error) {
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	c.copied += n
	return n, nil
}

func frame(n int, seed byte) []byte {
	f := make([]byte, n)
	binary.BigEndian.PutUint32(f, uint32(n))
	for i := codec.HeaderLen; i < n; i++ {
		f[i] = seed + byte(i)
	}
	return f
}

// feed delivers stream in chunks of the given sizes (cycled), running the Assembler to
// exhaustion after each, as OnTraffic does, and returns the frames in order.
func feed(t *testing.T, a *Assembler, c *chunkConn, stream []byte, chunk func() int) [][]byte {
	t.Helper()
	var out [][]byte
	for len(stream) > 0 {
		n := min(chunk(), len(stream))
		c.buf = append(c.buf, stream[:n]...)
		stream = stream[n:]
		frames, owned := drain(t, a, c)
		for i, f := range frames {
			if owned[i] && len(f) < 64<<10 {
				t.Fatalf("a %d-byte frame handed over: small frames are views", len(f))
			}
		}
		out = append(out, frames...)
	}
	return out
}

func TestFramesAtEverySplit(t *testing.T) {
	frames := [][]byte{frame(4, 0), frame(10, 1), frame(300, 2), frame(5, 3)}
	var stream []byte
	for _, f := range frames {
		stream = append(stream, f...)
	}
	for size := 1; size <= len(stream); size++ {
		var a Assembler
		c := &chunkConn{}
		got := feed(t, &a, c, stream, func() int { return size })
		if len(got) != len(frames) {
			t.Fatalf("chunks of %d: %d frames, want %d", size, len(got), len(frames))
		}
		for i := range got {
			if !bytes.Equal(got[i], frames[i]) {
				t.Fatalf("chunks of %d: frame %d differs", size, i)
			}
		}
		if len(c.buf) != 0 {
			t.Fatalf("chunks of %d: %d bytes left unconsumed", size, len(c.buf))
		}
	}
}

func TestLargeFrameIsLinearAndOwned(t *testing.T) {
	const n = 8 << 20
	big := frame(n, 7)
	tail := frame(100, 9)
	stream := append(append([]byte{}, big...), tail...)
	var a Assembler
	a.Max = 16 << 20
	c := &chunkConn{}
	rng := rand.New(rand.NewPCG(1, 2))
	var owned [][]byte
	var all [][]byte
	for len(stream) > 0 {
		k := min(1+rng.IntN(64<<10), len(stream))
		c.buf = append(c.buf, stream[:k]...)
		stream = stream[k:]
		for {
			f, own, err := a.Next(c)
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				break
			}
			if own {
				owned = append(owned, f)
			}
			all = append(all, bytes.Clone(f))
		}
		if got, l := a.Assembling(); l > 0 && len(c.buf) != 0 {
			t.Fatalf("assembling %d/%d bytes, but %d bytes left in the connection", got, l, len(c.buf))
		}
	}
	if len(all) != 2 || !bytes.Equal(all[0], big) || !bytes.Equal(all[1], tail) {
		t.Fatalf("got %d frames, or wrong contents", len(all))
	}
	if len(owned) != 1 || len(owned[0]) != n {
		t.Fatalf("the large frame must be handed over: %d owned frames", len(owned))
	}
	// Every byte of the large frame is copied once; the frames are peeked at most twice (the
	// header, then the frame when complete).
	if c.copied > n+len(tail) {
		t.Fatalf("copied %d bytes for a %d-byte stream", c.copied, n+len(tail))
	}
	if c.peeked > 2*(n+len(tail)) {
		t.Fatalf("peeked %d bytes for a %d-byte stream", c.peeked, n+len(tail))
	}
}

func TestBadLength(t *testing.T) {
	for _, tc := range []struct {
		n    uint32
		want error
	}{{3, codec.ErrFrameTooSmall}, {0, codec.ErrFrameTooSmall}, {1<<20 + 1, codec.ErrFrameTooLarge}, {1 << 31, codec.ErrFrameTooLarge}} {
		a := Assembler{Max: 1 << 20}
		// HeadLen bytes after the length: a frame above Max is reported once its head is there
		// (as an *Oversized below MaxSkip, TestOversizedSkipped).
		c := &chunkConn{buf: append(binary.BigEndian.AppendUint32(nil, tc.n), make([]byte, HeadLen)...)}
		if _, _, err := a.Next(c); !errors.Is(err, tc.want) {
			t.Fatalf("length %d: err %v, want %v", tc.n, err, tc.want)
		}
	}
}

func TestResetReleases(t *testing.T) {
	var a Assembler
	c := &chunkConn{buf: frame(1<<20, 0)[:1000]}
	if f, _, err := a.Next(c); f != nil || err != nil {
		t.Fatalf("an incomplete frame: %v %v", f, err)
	}
	if got, l := a.Assembling(); got != 1000 || l != 1<<20 {
		t.Fatalf("assembling %d/%d", got, l)
	}
	a.Reset()
	if got, l := a.Assembling(); got != 0 || l != 0 {
		t.Fatalf("after Reset: assembling %d/%d", got, l)
	}
}

// TestForeignProtocolNamed feeds replies of peers that do not speak TARS: the error names the
// protocol (HTTP, TLS, text) and still wraps the codec's frame length error.
func TestForeignProtocolNamed(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"http", "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "speaks HTTP"},
		{"tls alert", "\x15\x03\x03\x00\x02\x02\x46", "speaks TLS"},
		{"tls handshake", "\x16\x03\x01\x00\x40\x01\x00", "speaks TLS"},
		{"text", "-ERR unknown command\r\n", "answered text"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a Assembler
			_, _, err := a.Next(&chunkConn{buf: []byte(tt.in)})
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if !errors.Is(err, codec.ErrFrameTooLarge) && !errors.Is(err, codec.ErrFrameTooSmall) {
				t.Errorf("error %v does not wrap the frame length error", err)
			}
		})
	}
}
