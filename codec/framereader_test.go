package codec

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// countingReader counts the Read calls made on it.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// readAll reads frames until an error and returns copies of them.
func readAll(fr *FrameReader) ([][]byte, error) {
	var frames [][]byte
	for {
		f, err := fr.Next()
		if err != nil {
			return frames, err
		}
		frames = append(frames, bytes.Clone(f))
	}
}

func TestFrameReaderSplitsStream(t *testing.T) {
	stream, want := vectorStream(t)
	tests := []struct {
		name string
		r    io.Reader
	}{
		{name: "one read", r: bytes.NewReader(stream)},
		{name: "one byte per read", r: iotest.OneByteReader(bytes.NewReader(stream))},
		{name: "half of each buffer per read", r: iotest.HalfReader(bytes.NewReader(stream))},
		{name: "EOF with the last data", r: iotest.DataErrReader(bytes.NewReader(stream))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(NewFrameReader(tc.r, 0))
			if err != io.EOF {
				t.Errorf("final error: got %v, want io.EOF", err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d frames, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("frame %d: got %x, want %x", i, got[i], want[i])
				}
			}
		})
	}
}

func TestFrameReaderManyFramesPerRead(t *testing.T) {
	stream, frames := vectorStream(t)
	cr := &countingReader{r: bytes.NewReader(stream)}
	got, err := readAll(NewFrameReader(cr, 0))
	if err != io.EOF || len(got) != len(frames) {
		t.Fatalf("got %d frames, %v; want %d, io.EOF", len(got), err, len(frames))
	}
	if cr.reads != 2 { // one with all the data, one for the EOF
		t.Errorf("got %d reads for %d bytes, want 2", cr.reads, len(stream))
	}
}

func TestFrameReaderLargeFrame(t *testing.T) {
	p := RequestPacket{FuncName: "big", Buffer: bytes.Repeat([]byte{7}, 3<<20)}
	big := AppendRequest(nil, &p)
	stream := append(unhex(t, vecRsp1), big...)
	stream = append(stream, unhex(t, vecRspPing)...)
	fr := NewFrameReader(iotest.HalfReader(bytes.NewReader(stream)), 0)
	var got [][]byte
	for range 3 {
		f, err := fr.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", len(got), err)
		}
		got = append(got, bytes.Clone(f))
		if len(got) == 2 {
			// The buffer grew to hold the big frame, no further than twice it.
			if c := cap(fr.buf); c < len(big) || c > 2*len(big) {
				t.Errorf("buffer cap %d for a %d-byte frame", c, len(big))
			}
		}
	}
	if !bytes.Equal(got[1], big) {
		t.Errorf("big frame: got %d bytes, want %d", len(got[1]), len(big))
	}
	if _, err := fr.Next(); err != io.EOF {
		t.Errorf("after the last frame: got %v, want io.EOF", err)
	}
	// Once the big frame is consumed, its buffer is released.
	if c := cap(fr.buf); c > maxIdleBuf {
		t.Errorf("buffer cap %d after the big frame, want at most %d", c, maxIdleBuf)
	}
}

// A length is rejected as soon as the header is read, without allocating
// anything near it; the error sticks.
func TestFrameReaderBadLength(t *testing.T) {
	tests := []struct {
		name    string
		length  uint32
		max     int
		wantErr error
	}{
		{name: "zero", length: 0, wantErr: ErrFrameTooSmall},
		{name: "three", length: 3, wantErr: ErrFrameTooSmall},
		{name: "max+1", length: 1001, max: 1000, wantErr: ErrFrameTooLarge},
		{name: "2^31-1", length: 0x7fffffff, wantErr: ErrFrameTooLarge},
		{name: "2^32-1", length: 0xffffffff, wantErr: ErrFrameTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := append(unhex(t, vecRsp1), header(tc.length)...)
			stream = append(stream, make([]byte, 100)...)
			fr := NewFrameReader(iotest.OneByteReader(bytes.NewReader(stream)), tc.max)
			if _, err := fr.Next(); err != nil {
				t.Fatalf("the good frame first: %v", err)
			}
			for range 2 {
				if _, err := fr.Next(); !errors.Is(err, tc.wantErr) {
					t.Errorf("got %v, want %v", err, tc.wantErr)
				}
			}
			if cap(fr.buf) > minReadBuf {
				t.Errorf("buffer cap %d, want at most %d", cap(fr.buf), minReadBuf)
			}
		})
	}
}

// A header claiming a large valid length does not make the reader allocate
// it before the bytes arrive.
func TestFrameReaderGrowsWithData(t *testing.T) {
	const claimed = 8 << 20
	tests := []struct {
		name    string
		sent    int
		maxCap  int
		wantErr error
	}{
		{name: "100 bytes then EOF", sent: 100, maxCap: minReadBuf, wantErr: io.ErrUnexpectedEOF},
		{name: "1 MiB then EOF", sent: 1 << 20, maxCap: 2 << 20, wantErr: io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := append(header(claimed), make([]byte, tc.sent)...)
			fr := NewFrameReader(bytes.NewReader(stream), 0)
			for range 2 {
				if _, err := fr.Next(); err != tc.wantErr {
					t.Errorf("got %v, want %v", err, tc.wantErr)
				}
			}
			if cap(fr.buf) > tc.maxCap {
				t.Errorf("buffer cap %d after %d bytes, want at most %d", cap(fr.buf), tc.sent+HeaderLen, tc.maxCap)
			}
		})
	}
}

func TestFrameReaderErrors(t *testing.T) {
	frame := unhex(t, vecRspPing)
	boom := errors.New("boom")
	tests := []struct {
		name    string
		r       io.Reader
		frames  int
		wantErr error
	}{
		{name: "empty stream", r: bytes.NewReader(nil), wantErr: io.EOF},
		{name: "EOF inside a header", r: bytes.NewReader(frame[:2]), wantErr: io.ErrUnexpectedEOF},
		{name: "EOF inside a frame", r: bytes.NewReader(append(bytes.Clone(frame), frame[:6]...)), frames: 1, wantErr: io.ErrUnexpectedEOF},
		{name: "read error after a frame", r: io.MultiReader(bytes.NewReader(frame), iotest.ErrReader(boom)), frames: 1, wantErr: boom},
		{name: "timeout after the data", r: iotest.TimeoutReader(bytes.NewReader(append(bytes.Clone(frame), frame...))), frames: 2, wantErr: iotest.ErrTimeout},
		{name: "no progress", r: emptyReader{}, wantErr: io.ErrNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := NewFrameReader(tc.r, 0)
			got, err := readAll(fr)
			if len(got) != tc.frames || err != tc.wantErr {
				t.Errorf("got %d frames, %v; want %d, %v", len(got), err, tc.frames, tc.wantErr)
			}
			if _, err := fr.Next(); err != tc.wantErr {
				t.Errorf("again: got %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// emptyReader returns (0, nil) forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func BenchmarkFrameReader(b *testing.B) {
	stream, frames := vectorStream(b)
	r := bytes.NewReader(stream)
	fr := NewFrameReader(r, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		r.Reset(stream)
		for range frames {
			if _, err := fr.Next(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
