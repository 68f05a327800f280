package inbound

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestOversizedSkipped: a frame longer than Max, arriving in chunks between two frames that fit,
// is reported once as an *Oversized holding its length and first bytes, then skipped as its
// bytes arrive (none kept), and the frame after it comes out whole. Before, any frame longer
// than Max was an error that closed the connection with every call on it.
func TestOversizedSkipped(t *testing.T) {
	const limit = 1000
	big := frame(5000, 9)
	stream := append(append(frame(100, 1), big...), frame(200, 2)...)
	for _, chunk := range []int{7, 64, 700, 6000} {
		a := &Assembler{Max: limit}
		c := &chunkConn{}
		var frames [][]byte
		var over []*Oversized
		for rest := stream; len(rest) > 0; {
			n := min(chunk, len(rest))
			c.buf = append(c.buf, rest[:n]...)
			rest = rest[n:]
			for {
				f, _, err := a.Next(c)
				var ov *Oversized
				if errors.As(err, &ov) {
					over = append(over, ov)
					continue
				}
				if err != nil {
					t.Fatalf("chunks of %d: %v", chunk, err)
				}
				if f == nil {
					break
				}
				frames = append(frames, append([]byte(nil), f...))
			}
		}
		if len(over) != 1 {
			t.Fatalf("chunks of %d: %d oversized reports, want 1", chunk, len(over))
		}
		ov := over[0]
		if ov.Length != len(big) || ov.Max != limit || len(ov.Head) == 0 || !bytes.HasPrefix(big, ov.Head) || len(ov.Head) > HeadLen {
			t.Errorf("chunks of %d: oversized %d bytes, max %d, head of %d bytes (a prefix: %v); want %d, %d, a prefix of at most %d",
				chunk, ov.Length, ov.Max, len(ov.Head), bytes.HasPrefix(big, ov.Head), len(big), limit, HeadLen)
		}
		if !errors.Is(ov, codec.ErrFrameTooLarge) {
			t.Errorf("chunks of %d: %v does not match codec.ErrFrameTooLarge", chunk, ov)
		}
		if len(frames) != 2 || len(frames[0]) != 100 || len(frames[1]) != 200 || frames[1][10] != frame(200, 2)[10] {
			t.Errorf("chunks of %d: frames %d, want the 100- and 200-byte ones around the skipped one", chunk, len(frames))
		}
		if c.copied > 300 {
			t.Errorf("chunks of %d: %d bytes copied out, want at most the two frames' 300 (the skipped one is discarded)", chunk, c.copied)
		}
	}
}

// TestOversizedWaitsForItsHead: a frame above Max whose first read ends inside its head (its ids
// not all there) is reported only when the head has come, whatever the split. Before, the head
// was taken from the first read's bytes, could not be read, and the connection closed (found by a
// review: gnet reads 64 KiB at a time, so a frame that starts at the end of one is split so).
func TestOversizedWaitsForItsHead(t *testing.T) {
	big := frame(5000, 9)
	for split := 1; split < HeadLen+10; split++ {
		a := &Assembler{Max: 1000}
		c := &chunkConn{buf: append([]byte(nil), big[:split]...)}
		_, _, err := a.Next(c)
		if split < HeadLen {
			if err != nil {
				t.Fatalf("split at %d: %v before the head came, want nothing yet", split, err)
			}
			c.buf = append(c.buf, big[split:HeadLen+10]...)
			_, _, err = a.Next(c)
		}
		var ov *Oversized
		if !errors.As(err, &ov) {
			t.Fatalf("split at %d: %v, want an *Oversized", split, err)
		}
		if !bytes.Equal(ov.Head, big[:HeadLen]) {
			t.Fatalf("split at %d: a head of %d bytes, want the frame's first %d", split, len(ov.Head), HeadLen)
		}
	}
}

// TestOversizedNotSkipped: a length that is another protocol's bytes (HTTP's, text) or longer
// than MaxSkip is an error that is not an *Oversized: the connection closes, as before.
func TestOversizedNotSkipped(t *testing.T) {
	huge := frame(16, 0)
	huge[0] = 0x7f // a length of about 2 GiB, beyond MaxSkip
	for name, b := range map[string][]byte{
		"HTTP":            []byte("HTTP/1.1 400 Bad Request\r\n\r\n"),
		"text":            []byte("hello, server!\n"),
		"beyond MaxSkip":  huge,
		"TLS alert bytes": {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28},
	} {
		a := &Assembler{Max: 1000}
		c := &chunkConn{buf: append([]byte(nil), b...)}
		_, _, err := a.Next(c)
		var ov *Oversized
		if err == nil || errors.As(err, &ov) {
			t.Errorf("%s: Next returned %v, want an error that is not *Oversized", name, err)
		}
	}
}

// TestOversizedHeadDecidesEarly: with Head set, a frame above Max is judged on the bytes that
// are there: reported and skipped as soon as Head reads them as the head of a packet of that
// length, refused (an error wrapping codec.ErrFrameMismatch, not an *Oversized) as soon as Head
// finds the length does not match, and waited on while Head cannot tell. Before, Next waited for
// HeadLen bytes whatever they showed: a damaged length followed by a short reply, and then
// nothing, kept the connection's calls waiting for bytes that did not come.
func TestOversizedHeadDecidesEarly(t *testing.T) {
	head := responseHead
	good := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: 5, Buffer: bytes.Repeat([]byte("g"), 5000)})
	damaged := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: 6, Buffer: []byte("short")})
	binary.BigEndian.PutUint32(damaged, 336289144)

	a := &Assembler{Max: 1000, Head: head}
	c := &chunkConn{buf: append([]byte(nil), good[:30]...)}
	_, _, err := a.Next(c)
	ov, ok := err.(*Oversized)
	if !ok || ov.Length != len(good) || !bytes.Equal(ov.Head, good[:30]) {
		t.Fatalf("30 bytes of an oversized reply's head: %v; want it reported Oversized with those bytes", err)
	}

	a = &Assembler{Max: 1000, Head: head}
	c = &chunkConn{buf: append([]byte(nil), damaged...)}
	_, _, err = a.Next(c)
	if _, ok := err.(*Oversized); ok || !errors.Is(err, codec.ErrFrameMismatch) || !errors.Is(err, codec.ErrFrameTooLarge) {
		t.Fatalf("a short reply whose length was damaged: %v; want an error matching ErrFrameMismatch, not an *Oversized", err)
	}

	a = &Assembler{Max: 1000, Head: head}
	c = &chunkConn{buf: append([]byte(nil), good[:8]...)}
	if f, _, err := a.Next(c); f != nil || err != nil {
		t.Fatalf("8 bytes of an oversized reply: %d bytes, %v; want nothing yet", len(f), err)
	}
	c.buf = append(c.buf, good[8:40]...)
	if _, _, err := a.Next(c); !errors.As(err, &ov) || ov.Length != len(good) {
		t.Fatalf("then 40 bytes: %v; want it reported Oversized", err)
	}
}

func responseHead(b []byte, l int) (int, error) {
	var p codec.ResponsePacket
	return codec.DecodeResponseHead(b, l, &p)
}

// TestOversizedTrailerChecked: with Head set, an oversized frame is skipped to the end of its
// body, and the fields after the body (status, description, context) are checked to end exactly
// at the frame's end: a frame whose length is right goes by and the frame after it comes out
// whole; one whose length was damaged in its low bits (+300 bytes: within codec.MaxTrailer of the
// body's end, so the head check passes) is an error wrapping codec.ErrFrameMismatch once the
// bytes after the body show it, and so is one 3 bytes short. Before, such a frame was skipped
// to its announced length, into the replies after it, which were lost while the connection
// looked healthy (found by a review of the skip).
func TestOversizedTrailerChecked(t *testing.T) {
	big := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: 5, Ret: -3, ResultDesc: "a description",
		Status: map[string]string{"k": "v"}, Buffer: bytes.Repeat([]byte("g"), 5000)})
	next := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: 6, Buffer: []byte("next")})
	for _, chunk := range []int{7, 700, 6000} {
		a := &Assembler{Max: 1000, Head: responseHead}
		c := &chunkConn{}
		var over, frames int
		for rest := append(append([]byte(nil), big...), next...); len(rest) > 0; {
			n := min(chunk, len(rest))
			c.buf, rest = append(c.buf, rest[:n]...), rest[n:]
			for {
				f, _, err := a.Next(c)
				if _, ok := err.(*Oversized); ok {
					over++
					continue
				}
				if err != nil {
					t.Fatalf("chunks of %d: %v", chunk, err)
				}
				if f == nil {
					break
				}
				if !bytes.Equal(f, next) {
					t.Fatalf("chunks of %d: a frame of %d bytes after the oversized one, want the next one", chunk, len(f))
				}
				frames++
			}
		}
		if over != 1 || frames != 1 {
			t.Errorf("chunks of %d: %d oversized, %d frames; want 1 and 1", chunk, over, frames)
		}
	}
	for _, delta := range []int{300, -3} {
		damaged := append([]byte(nil), big...)
		binary.BigEndian.PutUint32(damaged, uint32(len(big)+delta))
		stream := append(damaged, bytes.Repeat(next, 20)...) // the replies after it
		a := &Assembler{Max: 1000, Head: responseHead}
		c := &chunkConn{buf: stream}
		var err error
		for range 10 {
			var f []byte
			if f, _, err = a.Next(c); err == nil && f == nil {
				break
			}
			if _, ok := err.(*Oversized); !ok {
				break
			}
		}
		if !errors.Is(err, codec.ErrFrameMismatch) {
			t.Errorf("a frame whose length was damaged by %+d: %v; want an error wrapping ErrFrameMismatch", delta, err)
		}
	}
}
