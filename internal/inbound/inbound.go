package inbound

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// Conn is the part of gnet.Conn an Assembler reads from.
type Conn interface {
	InboundBuffered() int
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Read(p []byte) (int, error)
}

// Assembler splits one connection's inbound bytes into frames. The zero value accepts frames up
// to codec.DefaultMaxPacketSize; set Max for another limit.
type Assembler struct {
	Max int // largest frame accepted, header included; 0 or less: codec.DefaultMaxPacketSize
	// Budget, shared by a server's connections, bounds what their incomplete large frames
	// reserve: a frame it cannot take is assembled in a buffer that grows with the bytes that
	// arrive. nil: every incomplete large frame takes a buffer of its whole length at once.
	Budget *Budget
	// Head, when set, reads the first bytes of a frame longer than Max (header included, at most
	// HeadLen) with the frame's length, as codec.DecodeResponseHead does: nil if they are the
	// head of a packet of that length (the frame is reported Oversized and skipped at once, up
	// to bodyEnd when that is not 0; the bytes from there to the frame's end are then checked
	// with codec.CheckTrailer, and a mismatch is an error that closes the connection), an
	// error wrapping codec.ErrTruncated if they do not tell yet (Next waits for more of the first
	// HeadLen bytes), any other error if they are no such head (Next returns an error: close the
	// connection, even when more bytes have not come). It is asked before the length is taken for
	// another protocol's (Foreign), which looks only at the length's four bytes. nil: Next
	// reports the frame once HeadLen bytes are there.
	Head func(head []byte, length int) (bodyEnd int, err error)

	frame    []byte // buffer of the frame being assembled: len is what it can receive now
	length   int    // the frame's whole length; 0: no frame being assembled
	got      int    // bytes of frame received so far
	large    bool   // frame is from bufpool, to be handed to the caller
	reserved int    // bytes of Budget the frame holds: its length, or 0 when its buffer grows
	small    []byte // reused for small frames split across reads
	view     int    // bytes of the last frame returned as a view into the Conn, not yet consumed
	fill     filler // the Conn filling the rest of frame itself (see filler), until the next Next
	skip     int    // bytes of an Oversized frame still to discard as they arrive
	trailer  int    // bytes after skip of an Oversized frame, its last fields, to check (Head)
}

// Oversized is the error of Next for a frame longer than Max, which its head's bytes do not show
// to be another protocol's, and no longer than MaxSkip: the Assembler discards the frame's bytes
// as they arrive (they take no memory) and then goes on with the next frame, so the caller can
// answer or fail the one call the frame is for, read from Head, and keep the connection and its
// other calls. A caller that cannot read Head (it is not the start of a TARS packet, or not of
// one of Length bytes: codec.DecodeResponseHead and DecodeRequestHead check it) closes the
// connection, as for the other errors of Next. It wraps codec.ErrFrameTooLarge.
type Oversized struct {
	Length int    // the frame's length, header included
	Max    int    // the Assembler's Max
	Head   []byte // the frame's first bytes, header included: HeadLen, or fewer that Assembler.Head read
}

// HeadLen bounds Oversized.Head: enough for a request's ids and names (tags 1 to 6) or a
// response's ids and return code (tags 1 to 5), and the head of the body after them.
const HeadLen = 4096

// MaxSkip is the longest frame an Assembler skips (Oversized); a longer one is an error that
// closes the connection: whatever its peer meant, it is not waiting for an answer to it.
const MaxSkip = 1 << 30

func (e *Oversized) Error() string {
	return fmt.Sprintf("%v: %d bytes, max %d", codec.ErrFrameTooLarge, e.Length, e.Max)
}

func (e *Oversized) Unwrap() error { return codec.ErrFrameTooLarge }

// Next returns the next whole frame of c, header included, or nil when no frame is complete yet
// (OnTraffic then returns and waits for the next read). A bad frame length is an error wrapping
// codec.ErrFrameTooSmall or codec.ErrFrameTooLarge: close the connection, unless it is an
// *Oversized, whose frame the Assembler skips.
//
// When owned is true the frame is the caller's, in a buffer from bufpool: it may keep it, hand
// it to another goroutine, or give it back with bufpool.Put. When owned is false the frame is a
// view, valid until the next call of Next or the end of the OnTraffic callback, whichever comes
// first. The caller must call Next until it returns nil or an error in every OnTraffic: the last
// view is consumed from c by the call that follows it. After an *Oversized error the caller may
// go on calling Next, which skips that frame.
func (a *Assembler) Next(c Conn) (frame []byte, owned bool, err error) {
	if a.view > 0 {
		_, _ = c.Discard(a.view)
		a.view = 0
	}
	if a.skip > 0 {
		n, _ := c.Discard(min(a.skip, c.InboundBuffered()))
		if a.skip -= n; a.skip > 0 {
			return nil, false, nil
		}
	}
	if a.trailer > 0 {
		// Checked on what is there as it comes: a stream out of step shows it in its first bytes
		// after the body, and the replies after it may come one at a time.
		n := min(c.InboundBuffered(), a.trailer)
		if n == 0 {
			return nil, false, nil
		}
		tail, err := c.Peek(n)
		if err != nil {
			return nil, false, err
		}
		switch err := codec.CheckTrailer(tail); {
		case err != nil && (n == a.trailer || !errors.Is(err, codec.ErrTruncated)):
			a.trailer = 0
			return nil, false, err // the length was not the frame's: what follows is out of step
		case n < a.trailer:
			return nil, false, nil
		}
		_, _ = c.Discard(a.trailer)
		a.trailer = 0
	}
	if a.length > 0 {
		if a.fill != nil {
			a.got += a.fill.Filled()
			a.fill = nil
		}
		a.pull(c)
		if a.got < a.length && a.large {
			a.readDirect(c)
		}
		if a.got < a.length {
			return nil, false, nil
		}
		frame, owned = a.done()
		return frame, owned, nil
	}
	have := c.InboundBuffered()
	if have < codec.HeaderLen {
		return nil, false, nil
	}
	head, err := c.Peek(codec.HeaderLen)
	if err != nil {
		return nil, false, err
	}
	l, err := codec.FrameLength(head, a.Max)
	if err != nil {
		b, _ := c.Peek(min(have, maxQuote))
		f := Foreign(b, err)
		if !errors.Is(err, codec.ErrFrameTooLarge) || f != err && a.Head == nil {
			return nil, false, f
		}
		if f == err {
			f = nil // no other protocol's
		}
		if err := a.oversized(c, have, head, f); err != nil {
			return nil, false, err
		}
		return nil, false, nil // the head is not all there yet
	}
	if have >= l {
		f, err := c.Peek(l)
		if err != nil {
			return nil, false, err
		}
		a.view = l
		return f[:l:l], false, nil
	}
	// Incomplete: take everything buffered now, and each later read, into the frame's buffer.
	if l >= bufpool.MinSize {
		a.start(l, have)
	} else {
		if cap(a.small) < l {
			a.small = make([]byte, l)
		}
		a.frame = a.small[:l:l]
	}
	a.length = l
	a.got, _ = c.Read(a.frame[:have])
	if a.large {
		a.readDirect(c)
		if a.got == a.length {
			frame, _ = a.done()
			return frame, true, nil
		}
	}
	return nil, false, nil
}

// oversized starts skipping the frame too long for Max whose header is head, of which have
// bytes are buffered, and returns its *Oversized error, once the frame's first HeadLen bytes (or
// all of it) are there to be its Head, or fewer that a.Head accepts: until then it returns nil,
// and Next waits for more bytes (a read may end anywhere in the head). One longer than MaxSkip,
// or whose first bytes a.Head finds are no head of its length, is an error that is not an
// *Oversized: foreign when Foreign named another protocol from the length's bytes.
func (a *Assembler) oversized(c Conn, have int, head []byte, foreign error) error {
	l := int(binary.BigEndian.Uint32(head))
	limit := a.Max
	if limit <= 0 {
		limit = codec.DefaultMaxPacketSize
	}
	if l > MaxSkip {
		if foreign != nil {
			return foreign
		}
		return fmt.Errorf("%w: %d bytes, max %d", codec.ErrFrameTooLarge, l, limit)
	}
	b, _ := c.Peek(min(have, HeadLen, l))
	end := l
	if a.Head != nil {
		// A stream out of step may send no more bytes for a while: decide on what is there
		// when it tells, rather than wait for HeadLen bytes and keep the calls waiting.
		switch bodyEnd, err := a.Head(b, l); {
		case err == nil:
			if bodyEnd > 0 {
				end = bodyEnd
			}
		case errors.Is(err, codec.ErrTruncated) && have < min(l, HeadLen):
			return nil
		case foreign != nil:
			return foreign
		default:
			return fmt.Errorf("%w: %d bytes, max %d, and no packet's head of that length: %w", codec.ErrFrameTooLarge, l, limit, err)
		}
	} else if have < min(l, HeadLen) {
		return nil
	}
	e := &Oversized{Length: l, Max: limit, Head: append([]byte(nil), b...)}
	n, _ := c.Discard(min(have, end))
	a.skip, a.trailer = end-n, l-end
	return e
}

// start takes the buffer of an incomplete large frame of length l, of which have bytes are
// buffered: the whole length when Budget can reserve it (or there is none), else a buffer for
// what is there, at least bufpool.MinSize, that grows as more arrives (grow).
func (a *Assembler) start(l, have int) {
	a.large = true
	if a.Budget == nil {
		a.frame = bufpool.Get(l)[:l]
		return
	}
	if a.Budget.take(l) {
		a.frame, a.reserved = bufpool.Get(l)[:l], l
		return
	}
	a.Budget.grown.Add(1)
	b := bufpool.Get(max(have, bufpool.MinSize))
	a.frame = b[:min(cap(b), l)]
}

// pull moves the bytes c holds into the frame, growing its buffer when it is full and more
// bytes are there. A buffer of the frame's whole length takes them with one Read.
func (a *Assembler) pull(c Conn) {
	for a.got < a.length {
		if a.got == len(a.frame) {
			more := c.InboundBuffered()
			if more == 0 {
				return
			}
			a.grow(more)
		}
		n, _ := c.Read(a.frame[a.got:])
		a.got += n
		if a.got < len(a.frame) {
			return // c has no more
		}
	}
}

// grow moves the frame, whose buffer is full, to a buffer from bufpool at least twice as large
// and large enough for more bytes, but no larger than the frame, and gives the old one back.
// Memory follows what arrived: a buffer grows only for bytes in hand, so it holds at most about
// twice the bytes received (or bufpool.MinSize), plus bufpool's rounding up to a class.
func (a *Assembler) grow(more int) {
	b := bufpool.Get(min(max(2*len(a.frame), a.got+more), a.length))
	b = b[:min(cap(b), a.length)]
	copy(b, a.frame[:a.got])
	bufpool.Put(a.frame)
	a.frame = b
}

// done returns the complete frame, which the caller now owns if it is large, releases its
// reservation, and readies the Assembler for the next frame.
func (a *Assembler) done() (frame []byte, owned bool) {
	frame, owned = a.frame[:a.length], a.large
	if a.reserved > 0 {
		a.Budget.give(a.reserved)
	}
	a.frame, a.length, a.got, a.large, a.reserved = nil, 0, 0, false, 0
	return frame, owned
}

// maxQuote bounds what an error about a foreign protocol quotes of the peer's bytes.
const maxQuote = 64

// Foreign names the protocol the peer speaks when bad frame length err comes from bytes that are
// obviously not TARS: an HTTP status line, a TLS record, or text. It wraps err, so errors.Is
// still finds codec.ErrFrameTooLarge or codec.ErrFrameTooSmall; otherwise it returns err.
func Foreign(b []byte, err error) error {
	if len(b) < codec.HeaderLen {
		return err
	}
	switch {
	case bytes.HasPrefix(b, []byte("HTTP/")):
		line, _, _ := bytes.Cut(b, []byte("\r\n"))
		return fmt.Errorf("the peer speaks HTTP, not TARS: it answered %q (%w)", line, err)
	case (b[0] == 0x15 || b[0] == 0x16) && b[1] == 3 && b[2] <= 4:
		what := "a TLS handshake record"
		if b[0] == 0x15 {
			what = "a TLS alert"
		}
		return fmt.Errorf("the peer speaks TLS, not plain TARS: it answered with %s; if the endpoint is TLS, declare it ssl, not tcp (%w)", what, err)
	case printable(b[:codec.HeaderLen]):
		return fmt.Errorf("the peer does not speak TARS: it answered text %q (%w)", b, err)
	}
	return err
}

// printable reports whether b is all printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// fder is implemented by connections whose socket the Assembler may read directly (gnet.Conn).
type fder interface{ Fd() int }

// A filler is a connection without a socket to read directly that can put the next bytes it
// gets straight into a frame's buffer (tlsconn.LoopConn, whose Pump decrypts into it): Fill(p)
// asks it to fill p with the bytes that follow those read so far, as they come, before any it
// keeps itself; Filled returns how many it put there and forgets p. Fill(nil) takes p back.
type filler interface {
	Fill(p []byte)
	Filled() int
}

// readDirect reads the rest of a large frame straight from c's socket into the frame's buffer,
// as far as the socket has bytes: one copy (kernel to frame) instead of two (kernel to gnet's
// read buffer to frame), and a few large read() calls instead of one per 64 KiB. It never reads
// past the frame's buffer, so the bytes of the next frame stay in the socket for gnet, whose
// poller reports them; so do those of a frame whose growing buffer is full, which gnet's next
// read brings to pull as evidence that the buffer must grow. An error or end of stream is left
// for gnet's next read to find.
func (a *Assembler) readDirect(c Conn) {
	f, ok := c.(fder)
	if !ok {
		return
	}
	fd := f.Fd()
	if fd < 0 {
		if fl, ok := c.(filler); ok && a.got < len(a.frame) {
			fl.Fill(a.frame[a.got:])
			a.fill = fl
		}
		return
	}
	for a.got < len(a.frame) {
		n, err := syscall.Read(fd, a.frame[a.got:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		a.got += n
	}
}

// Assembling reports how many bytes of an incomplete frame are held, and the frame's length.
func (a *Assembler) Assembling() (got, length int) { return a.got, a.length }

// Reset drops any frame being assembled (the connection closed) and releases its buffer.
func (a *Assembler) Reset() {
	if a.fill != nil {
		a.fill.Fill(nil)
		a.fill = nil
	}
	if a.large {
		bufpool.Put(a.frame)
	}
	if a.reserved > 0 {
		a.Budget.give(a.reserved)
	}
	a.frame, a.length, a.got, a.large, a.reserved, a.view, a.skip, a.trailer = nil, 0, 0, false, 0, 0, 0, 0
}
