package codec

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// WriteProto writes m, marshalled by protobuf, as a simple list. It sizes m
// once with proto.Size and marshals straight into Buf, with no intermediate
// buffer. On error Buf is left as it was. m must not be modified
// concurrently.
func (e *Encoder) WriteProto(tag byte, m proto.Message) error {
	size := proto.Size(m)
	start := len(e.Buf)
	e.WriteBytesHead(tag, size)
	body := len(e.Buf)
	e.Buf = grow(e.Buf, size)
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(e.Buf, m)
	if err != nil {
		e.Buf = e.Buf[:start]
		return fmt.Errorf("codec: tag %d: marshal %T: %w", tag, m, err)
	}
	if len(out)-body != size {
		e.Buf = e.Buf[:start]
		return fmt.Errorf("codec: tag %d: marshal %T: size changed from %d to %d bytes while encoding", tag, m, size, len(out)-body)
	}
	e.Buf = out
	return nil
}

// ReadProto reads field tag, a simple list (or list of int8), into m with
// proto.Unmarshal, which resets m first; an absent optional field leaves m
// reset. m does not alias the input. An unmarshal error wraps both
// ErrMalformed and the protobuf error.
func (d *Decoder) ReadProto(tag byte, required bool, m proto.Message) error {
	b, err := d.ReadBytesView(tag, required)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("%w: tag %d: unmarshal %T: %w", ErrMalformed, tag, m, err)
	}
	return nil
}

// EncodeProto is Encode with body, marshalled in place, as the request's
// Buffer; p.Buffer is ignored. It saves marshalling the body into a buffer
// of its own and copying it. On error e.Buf is left as it was.
func (p *RequestPacket) EncodeProto(e *Encoder, body proto.Message) error {
	start := len(e.Buf)
	e.Buf = p.appendHead(grow(e.Buf, p.encodedSizeHint()))
	if err := e.WriteProto(7, body); err != nil {
		e.Buf = e.Buf[:start]
		return err
	}
	e.Buf = p.appendTail(e.Buf)
	return nil
}

// AppendRequestProto is AppendRequest with body, marshalled in place, as
// the request's Buffer (see RequestPacket.EncodeProto). On error it returns
// b unchanged in length.
func AppendRequestProto(b []byte, p *RequestPacket, body proto.Message) ([]byte, error) {
	start := len(b)
	b, frameStart := BeginFrame(b)
	e := Encoder{Buf: b}
	if err := p.EncodeProto(&e, body); err != nil {
		return e.Buf[:start], err
	}
	EndFrame(e.Buf, frameStart)
	return e.Buf, nil
}
