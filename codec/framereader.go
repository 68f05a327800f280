package codec

import (
	"encoding/binary"
	"io"
)

// minReadBuf is the FrameReader's first buffer size and smallest growth
// step.
const minReadBuf = 4 << 10

// maxIdleBuf is the largest buffer a FrameReader keeps while it holds no
// unread bytes; a larger one, grown for a large frame, is released.
const maxIdleBuf = 64 << 10

// maxEmptyReads is how many consecutive (0, nil) reads FrameReader.Next
// tolerates before it gives up with io.ErrNoProgress.
const maxEmptyReads = 100

// FrameReader splits the byte stream of an io.Reader into frames, for code
// that reads a connection itself rather than through an event loop. It
// reads as much as its buffer holds, so one read may yield many frames, and
// it reassembles frames split across reads. Its buffer grows only as the
// bytes of a frame arrive: a header claiming a large length does not make
// it allocate that length up front. A buffer grown past 64 KiB for a large
// frame is released once it holds no unread bytes.
//
// A FrameReader is not safe for concurrent use.
type FrameReader struct {
	r       io.Reader
	maxSize int
	buf     []byte // len(buf) == cap(buf); buf[start:end] is unread
	start   int
	end     int
	err     error // sticky: from the reader or a bad frame header
}

// NewFrameReader returns a FrameReader reading r and rejecting frames
// longer than maxSize bytes (DefaultMaxPacketSize when maxSize is 0 or
// less). It allocates its buffer on the first call to Next.
func NewFrameReader(r io.Reader, maxSize int) *FrameReader {
	if maxSize <= 0 {
		maxSize = DefaultMaxPacketSize
	}
	return &FrameReader{r: r, maxSize: maxSize}
}

// Next returns the next whole frame, header included. The frame is valid
// only until the next call to Next. At the end of the stream Next returns
// io.EOF, or io.ErrUnexpectedEOF if the stream ended inside a frame. A bad
// frame header yields an error wrapping ErrFrameTooSmall or
// ErrFrameTooLarge; that error, like a read error, is returned again by
// every later call.
func (fr *FrameReader) Next() ([]byte, error) {
	if fr.start == fr.end {
		// The previous frame may be overwritten now.
		fr.start, fr.end = 0, 0
		if len(fr.buf) > maxIdleBuf {
			fr.buf = nil
		}
	}
	empty := 0
	for {
		frame, n, err := NextFrame(fr.buf[fr.start:fr.end], fr.maxSize)
		if err != nil {
			fr.err = err
			return nil, err
		}
		if frame != nil {
			fr.start += n
			return frame, nil
		}
		if fr.err != nil {
			if fr.err == io.EOF && fr.end > fr.start {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, fr.err
		}
		fr.makeRoom()
		n, err = fr.r.Read(fr.buf[fr.end:])
		if n < 0 || n > len(fr.buf)-fr.end {
			n, err = 0, io.ErrShortBuffer // a broken io.Reader
		}
		fr.end += n
		fr.err = err
		if n == 0 && err == nil {
			if empty++; empty >= maxEmptyReads {
				fr.err = io.ErrNoProgress
			}
		}
	}
}

// makeRoom makes room for at least one more byte after fr.end: it moves the
// unread bytes to the front when the current frame would not fit behind
// them, and grows the buffer, by doubling and no further than the frame's
// length, when the frame would not fit at all.
func (fr *FrameReader) makeRoom() {
	need := HeaderLen // bytes of the frame being assembled
	if fr.end-fr.start >= HeaderLen {
		// NextFrame has checked the length against maxSize.
		need = int(binary.BigEndian.Uint32(fr.buf[fr.start:]))
	}
	if fr.start > 0 && (len(fr.buf)-fr.start < need || fr.end == len(fr.buf)) {
		fr.end = copy(fr.buf, fr.buf[fr.start:fr.end])
		fr.start = 0
	}
	if fr.end < len(fr.buf) {
		return
	}
	size := minReadBuf
	if len(fr.buf) >= minReadBuf {
		// The frame is longer than the buffer: need > len(fr.buf).
		size = max(min(2*len(fr.buf), need), len(fr.buf)+1)
	}
	buf := make([]byte, size)
	copy(buf, fr.buf[:fr.end])
	fr.buf = buf
}
