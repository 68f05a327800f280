package server

import (
	"encoding/binary"

	"github.com/tarscomm/tarscomm/codec"
)

// decodeRequest decodes frame (a whole frame, header included, as codec.NextFrame returns it)
// into req as codec.DecodeRequest does, except that the servant and function names are not
// converted to strings: they are returned as views into frame, and req.ServantName and
// req.FuncName are left empty for route to fill with the registered names. This saves two
// allocations per request. A name written in an unusual form (long head, a type other than
// string) is read by codec, which reports the error.
func decodeRequest(frame []byte, req *codec.RequestPacket) (servant, fn []byte, err error) {
	if len(frame) < codec.HeaderLen || uint64(binary.BigEndian.Uint32(frame)) != uint64(len(frame)) {
		return nil, nil, codec.DecodeRequest(frame, req) // reports the bad frame
	}
	r := nameReader{in: frame[codec.HeaderLen:]}
	d := &r.d
	d.Reset(r.in)
	if req.Version, err = d.ReadInt16(1, true); err != nil {
		return nil, nil, err
	}
	if req.PacketType, err = d.ReadInt8(2, true); err != nil {
		return nil, nil, err
	}
	if req.MessageType, err = d.ReadInt32(3, true); err != nil {
		return nil, nil, err
	}
	if req.RequestID, err = d.ReadInt32(4, true); err != nil {
		return nil, nil, err
	}
	if servant, err = r.name(5); err != nil {
		return nil, nil, err
	}
	if fn, err = r.name(6); err != nil {
		return nil, nil, err
	}
	if req.Buffer, err = d.ReadBytesView(7, true); err != nil {
		return nil, nil, err
	}
	if req.Timeout, err = d.ReadInt32(8, false); err != nil {
		return nil, nil, err
	}
	if req.Context, err = d.ReadStringMap(9, false); err != nil {
		return nil, nil, err
	}
	if req.Status, err = d.ReadStringMap(10, false); err != nil {
		return nil, nil, err
	}
	return servant, fn, nil
}

// nameReader is a codec.Decoder that can also return string fields as views.
type nameReader struct {
	d  codec.Decoder
	in []byte // d's input
}

// name reads the required string field tag at the current position and returns a view of its
// bytes. In the usual form (short head, 1- or 4-byte length, all bytes present) it parses the
// field itself and restarts the Decoder after it; otherwise codec reads it and reports errors.
func (r *nameReader) name(tag byte) ([]byte, error) {
	b := r.in
	if off := r.d.Offset(); off < len(b) && b[off]>>4 == tag {
		start, n := -1, 0
		switch b[off] & 0x0f {
		case codec.TypeString1:
			if off+2 <= len(b) {
				start, n = off+2, int(b[off+1])
			}
		case codec.TypeString4:
			if off+5 <= len(b) {
				if u := binary.BigEndian.Uint32(b[off+1:]); uint64(u) <= uint64(len(b)) {
					start, n = off+5, int(u)
				}
			}
		}
		if start >= 0 && start+n <= len(b) {
			r.in = b[start+n:]
			r.d.Reset(r.in)
			return b[start : start+n : start+n], nil
		}
	}
	s, err := r.d.ReadString(tag, true)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}
