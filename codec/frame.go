package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderLen is the size of a frame header: a big-endian uint32 holding the
// length of the whole frame, header included.
const HeaderLen = 4

// DefaultMaxPacketSize is the default largest frame accepted, 10 MiB, as
// in TarsGo.
const DefaultMaxPacketSize = 10 << 20

// ErrFrameTooSmall reports a frame header whose length is less than
// HeaderLen. The stream is corrupt: close the connection and fail the calls
// pending on it.
var ErrFrameTooSmall = errors.New("codec: frame length too small")

// ErrFrameTooLarge reports a frame header whose length exceeds the maximum
// packet size. The stream is corrupt or the peer's packets are larger than
// configured: close the connection and fail the calls pending on it.
var ErrFrameTooLarge = errors.New("codec: frame length too large")

// BeginFrame appends a HeaderLen-byte length placeholder to b and returns
// the result and the offset where the frame starts. Encode the packet by
// appending to the result, then call EndFrame.
func BeginFrame(b []byte) ([]byte, int) {
	return append(b, 0, 0, 0, 0), len(b)
}

// EndFrame writes the length of the frame that starts at offset start of b
// and runs to the end of b into the frame's header.
func EndFrame(b []byte, start int) {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start))
}

// NextFrame returns the first complete frame at the start of buf, header
// included, and its length n; the frame's capacity is clipped to n. It
// returns (nil, 0, nil) when buf does not yet hold a whole frame. A length
// below HeaderLen is an error wrapping ErrFrameTooSmall, one above maxSize an
// error wrapping ErrFrameTooLarge; both are reported as soon as the header
// is in buf. A maxSize of 0 or less means DefaultMaxPacketSize.
func NextFrame(buf []byte, maxSize int) (frame []byte, n int, err error) {
	if len(buf) < HeaderLen {
		return nil, 0, nil
	}
	l, err := frameLen(buf, maxSize)
	if err != nil || len(buf) < l {
		return nil, 0, err
	}
	return buf[:l:l], l, nil
}

// FrameLength returns the length of the frame whose header starts b (which
// holds at least HeaderLen bytes), header included, after the checks of
// NextFrame: an error wraps ErrFrameTooSmall or ErrFrameTooLarge. A maxSize
// of 0 or less means DefaultMaxPacketSize.
func FrameLength(b []byte, maxSize int) (int, error) { return frameLen(b, maxSize) }

// frameLen reads and checks the length in the frame header at the start of
// b, which holds at least HeaderLen bytes.
func frameLen(b []byte, maxSize int) (int, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxPacketSize
	}
	l := binary.BigEndian.Uint32(b)
	if l < HeaderLen {
		return 0, fmt.Errorf("%w: %d bytes", ErrFrameTooSmall, l)
	}
	if uint64(l) > uint64(maxSize) {
		return 0, fmt.Errorf("%w: %d bytes, max %d", ErrFrameTooLarge, l, maxSize)
	}
	return int(l), nil
}

// frameBody checks that frame is one whole frame and returns its packet.
func frameBody(frame []byte) ([]byte, error) {
	if len(frame) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrFrameTooSmall, len(frame))
	}
	if l := binary.BigEndian.Uint32(frame); uint64(l) != uint64(len(frame)) {
		return nil, malformed(0, "frame header says %d bytes, frame has %d", l, len(frame))
	}
	return frame[HeaderLen:], nil
}

// AppendRequest appends one whole frame holding p to b and returns the
// result.
func AppendRequest(b []byte, p *RequestPacket) []byte {
	b, start := BeginFrame(b)
	e := Encoder{Buf: b}
	p.Encode(&e)
	EndFrame(e.Buf, start)
	return e.Buf
}

// AppendResponse appends one whole frame holding p to b and returns the
// result.
func AppendResponse(b []byte, p *ResponsePacket) []byte {
	b, start := BeginFrame(b)
	e := Encoder{Buf: b}
	p.Encode(&e)
	EndFrame(e.Buf, start)
	return e.Buf
}

// AppendResponseAround appends the frame holding p to b as AppendResponse
// does, except p.Buffer's bytes, and returns the result and the offset at
// which they belong: the frame is the bytes appended up to at, then
// p.Buffer, then the rest (the frame's length counts p.Buffer). It lets a
// large body be written from where it is (a vectored write of the three
// parts) instead of being copied into the frame.
func AppendResponseAround(b []byte, p *ResponsePacket) (out []byte, at int) {
	b, start := BeginFrame(b)
	b = p.appendHead(b)
	at = len(b)
	b = p.appendTail(b)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start+len(p.Buffer)))
	return b, at
}

// DecodeRequest decodes one frame, as returned by NextFrame (header
// included), into p. p.Buffer is a view into frame, as RequestPacket.Decode
// documents.
func DecodeRequest(frame []byte, p *RequestPacket) error {
	body, err := frameBody(frame)
	if err != nil {
		return err
	}
	d := Decoder{buf: body}
	return p.Decode(&d)
}

// DecodeResponse decodes one frame, as returned by NextFrame (header
// included), into p. p.Buffer is a view into frame, as
// ResponsePacket.Decode documents.
func DecodeResponse(frame []byte, p *ResponsePacket) error {
	body, err := frameBody(frame)
	if err != nil {
		return err
	}
	d := Decoder{buf: body}
	return p.Decode(&d)
}

// DecodeRequestHead decodes into p what head, the first bytes of a request frame of length bytes
// too long to read whole (header included), holds of its head: iVersion, cPacketType,
// iMessageType, iRequestId, sServantName and sFuncName (tags 1 to 6), which must be whole in
// head. A server answers the request from them without reading its body. It also checks that
// length is the frame the head announces (bodyFits): a length that does not match is a stream
// out of step, not a large request to skip. It returns where the body ends in the frame (0 when
// the body is a list of int8, whose end the head does not tell): the bytes from there to length
// are the packet's last fields, which CheckTrailer checks.
func DecodeRequestHead(head []byte, length int, p *RequestPacket) (bodyEnd int, err error) {
	d, err := headDecoder(head)
	if err != nil {
		return 0, err
	}
	if err := p.decodeIDs(d); err != nil {
		return 0, err
	}
	if p.ServantName, err = d.ReadString(5, true); err != nil {
		return 0, err
	}
	if p.FuncName, err = d.ReadString(6, true); err != nil {
		return 0, err
	}
	return bodyFits(d, 7, length)
}

// DecodeResponseHead decodes into p iVersion, cPacketType and iRequestId (tags 1 to 3), which
// head, the first bytes of a response frame of length bytes too long to read whole (header
// included), must hold: a client fails the call it answers without reading its body. It also
// checks that length is the frame the head announces (bodyFits), and returns where the body ends,
// as DecodeRequestHead does.
func DecodeResponseHead(head []byte, length int, p *ResponsePacket) (bodyEnd int, err error) {
	d, err := headDecoder(head)
	if err != nil {
		return 0, err
	}
	if err := p.decodeIDs(d); err != nil {
		return 0, err
	}
	return bodyFits(d, 6, length)
}

// CheckTrailer checks the bytes of a frame after its body, where DecodeRequestHead or
// DecodeResponseHead said the body ends: whole fields in increasing tag order after the body's,
// ending exactly at the frame's end. Anything else is an error wrapping ErrFrameMismatch: the
// length was not the frame's, and what follows is out of step. tail may be the first of those
// bytes only: then a field cut short at its end is an error wrapping ErrTruncated too (more
// bytes may make it whole), and the check can be made again on more.
func CheckTrailer(tail []byte) error {
	d := Decoder{buf: tail}
	last := -1
	for d.off < len(d.buf) {
		t, typ, n, err := d.peekHead()
		if err == nil && (int(t) <= last || t < 7 || typ == TypeStructEnd) {
			err = malformed(d.off, "tag %d after tag %d", t, last)
		}
		if err == nil {
			d.off += n
			err = d.skipValue(typ, 0)
		}
		if err != nil {
			return fmt.Errorf("%w: the %d bytes after the body are not the packet's last fields: %w", ErrFrameMismatch, len(tail), err)
		}
		last = int(t)
	}
	return nil
}

// ErrFrameMismatch is the error of DecodeRequestHead and DecodeResponseHead for a head that
// reads as a packet's but not as one of the frame's length: a length prefix damaged, or a stream
// read out of step. It wraps ErrMalformed.
var ErrFrameMismatch = fmt.Errorf("%w: the frame's length does not match its packet", ErrMalformed)

// MaxTrailer bounds the bytes a packet may carry after its body (sBuffer) in a frame too long to
// read whole: a request's iTimeout, context and status, a response's status, sResultDesc and
// context. What makes a frame that long is its body.
const MaxTrailer = 64 << 10

// bodyFits reads the head and size of body field tag (a request's sBuffer is 7, a response's 6),
// which must be whole in d, and checks that a frame of length bytes holds that body followed by
// at most MaxTrailer bytes. A frame whose length prefix was damaged, or a stream read out of step,
// rarely passes: its length would have to land within MaxTrailer of where the body it announces
// ends. It returns the body's end for a simple list, 0 for a list of int8.
func bodyFits(d *Decoder, tag byte, length int) (int, error) {
	typ, _, err := d.find(tag, true)
	if err != nil {
		return 0, err
	}
	var lo, hi int64 // the bytes the body takes: a list of int8 takes 1 or 2 a byte
	switch typ {
	case TypeSimpleList:
		if d.off >= len(d.buf) {
			return 0, truncated(d.off, "tag %d: a simple list's element head", tag)
		}
		if d.buf[d.off] != 0x00 {
			return 0, malformed(d.off, "tag %d: not a simple list of bytes", tag)
		}
		d.off++
		n, err := d.readInt(0, true, TypeInt32)
		if err != nil {
			return 0, err
		}
		lo, hi = n, n
	case TypeList:
		n, err := d.readInt(0, true, TypeInt32)
		if err != nil {
			return 0, err
		}
		lo, hi = n, 2*n
	default:
		return 0, mismatch(d.off, tag, typ, TypeSimpleList)
	}
	start := int64(HeaderLen + d.off)
	if lo < 0 || start+lo > int64(length) || int64(length)-(start+hi) > MaxTrailer {
		return 0, fmt.Errorf("%w: a frame of %d bytes does not hold the body of %d bytes its tag %d announces at offset %d and at most %d bytes after it",
			ErrFrameMismatch, length, lo, tag, start, MaxTrailer)
	}
	if typ == TypeList {
		return 0, nil
	}
	return int(start + lo), nil
}

// headDecoder reads the packet after the frame header in head, the first bytes of a frame.
func headDecoder(head []byte) (*Decoder, error) {
	if len(head) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrFrameTooSmall, len(head))
	}
	return &Decoder{buf: head[HeaderLen:]}, nil
}
