// Package tarswire is the smallest TARS wire codec a client and a server need, written with
// the standard library only, for the baseline (the floor) of the benchmarks: a client frames a
// RequestPacket with a body and reads the request id, return code and body out of a
// ResponsePacket; a server reads what it needs of a RequestPacket and frames the
// ResponsePacket answering it. It shares no code with tarscomm's codec, so the baseline does
// not move when the library does.
package tarswire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// TARS field types.
const (
	tInt8 = iota
	tInt16
	tInt32
	tInt64
	tFloat
	tDouble
	tString1
	tString4
	tMap
	tList
	tStructBegin
	tStructEnd
	tZero
	tSimpleList
)

// ErrMalformed reports a packet that is not a valid TARS RequestPacket or ResponsePacket.
var ErrMalformed = errors.New("tarswire: malformed packet")

func appendHead(b []byte, tag, typ byte) []byte {
	if tag < 15 {
		return append(b, tag<<4|typ)
	}
	return append(b, 0xF0|typ, tag)
}

func appendInt(b []byte, tag byte, v int64) []byte {
	switch {
	case v == 0:
		return appendHead(b, tag, tZero)
	case v >= -128 && v <= 127:
		return append(appendHead(b, tag, tInt8), byte(v))
	case v >= -32768 && v <= 32767:
		return binary.BigEndian.AppendUint16(appendHead(b, tag, tInt16), uint16(v))
	case v >= -1<<31 && v < 1<<31:
		return binary.BigEndian.AppendUint32(appendHead(b, tag, tInt32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(appendHead(b, tag, tInt64), uint64(v))
}

func appendString(b []byte, tag byte, s string) []byte {
	if len(s) <= 255 {
		return append(append(appendHead(b, tag, tString1), byte(len(s))), s...)
	}
	return append(binary.BigEndian.AppendUint32(appendHead(b, tag, tString4), uint32(len(s))), s...)
}

// AppendRequest appends one framed, normal (two-way) TARS request to b: version 1, no
// context or status, body as the parameters' buffer.
func AppendRequest(b []byte, reqID int32, servant, fn string, body []byte, timeoutMS int32) []byte {
	b = AppendRequestHead(b, reqID, servant, fn, len(body), timeoutMS)
	return AppendRequestTail(append(b, body...), timeoutMS)
}

// AppendRequestHead appends what precedes the body in the frame AppendRequest writes (length
// prefix included), for a body of bodyLen bytes; the body, then AppendRequestTail with the
// same timeout, complete the frame. With them a client can write a large body from its own
// buffer (a vectored write) instead of copying it into the frame.
func AppendRequestHead(b []byte, reqID int32, servant, fn string, bodyLen int, timeoutMS int32) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = appendInt(b, 1, 1) // iVersion: TARS
	b = appendInt(b, 2, 0) // cPacketType: normal
	b = appendInt(b, 3, 0) // iMessageType
	b = appendInt(b, 4, int64(reqID))
	b = appendString(b, 5, servant)
	b = appendString(b, 6, fn)
	b = appendHead(b, 7, tSimpleList)
	b = appendHead(b, 0, tInt8)
	b = appendInt(b, 0, int64(bodyLen))
	var tail [16]byte
	frameLen := len(b) - start + bodyLen + len(AppendRequestTail(tail[:0], timeoutMS))
	binary.BigEndian.PutUint32(b[start:], uint32(frameLen))
	return b
}

// AppendRequestTail appends what follows the body in the frame AppendRequest writes.
func AppendRequestTail(b []byte, timeoutMS int32) []byte {
	b = appendInt(b, 8, int64(timeoutMS))
	b = appendInt(appendHead(b, 9, tMap), 0, 0)     // context: empty map
	return appendInt(appendHead(b, 10, tMap), 0, 0) // status: empty map
}

// PacketOneway is the packet type of a request that wants no reply.
const PacketOneway = 1

// Request is what a server needs of a RequestPacket.
type Request struct {
	Version     int16
	PacketType  int8 // 0 normal, PacketOneway
	MessageType int32
	RequestID   int32
	Servant     []byte // a view into the frame given to DecodeRequest
	Func        []byte // a view into the frame
	Body        []byte // sBuffer: a view into the frame
}

// DecodeRequest reads r from one whole frame (length prefix included). It fails on a frame
// without a body (tag 7).
func DecodeRequest(frame []byte, r *Request) error {
	d := decoder{b: frame[4:]}
	*r = Request{}
	seenBody := false
	for d.off < len(d.b) {
		tag, typ, err := d.head()
		if err != nil {
			return err
		}
		isInt := typ <= tInt32 || typ == tZero
		var v int64
		switch {
		case isInt && tag >= 1 && tag <= 4:
			if v, err = d.int(typ); err != nil {
				return err
			}
			switch tag {
			case 1:
				r.Version = int16(v)
			case 2:
				r.PacketType = int8(v)
			case 3:
				r.MessageType = int32(v)
			case 4:
				r.RequestID = int32(v)
			}
		case (tag == 5 || tag == 6) && (typ == tString1 || typ == tString4):
			s, err := d.str(typ)
			if err != nil {
				return err
			}
			if tag == 5 {
				r.Servant = s
			} else {
				r.Func = s
			}
		case tag == 7 && typ == tSimpleList:
			if r.Body, err = d.simpleList(); err != nil {
				return err
			}
			seenBody = true
		default:
			if err := d.skip(typ, 0); err != nil {
				return err
			}
		}
	}
	if !seenBody {
		return ErrMalformed
	}
	return nil
}

// AppendResponse appends the framed ResponsePacket answering req to b: ret (0 is success),
// body as sBuffer, desc as sResultDesc if not empty; version, request id and message type are
// req's. Tags 1 to 7 are always written (TarsGo's and tarscomm's readers require them), the
// status map empty.
func AppendResponse(b []byte, req *Request, ret int32, body []byte, desc string) []byte {
	b = AppendResponseHead(b, req, ret, len(body), desc)
	return AppendResponseTail(append(b, body...), desc)
}

// AppendResponseHead appends what precedes the body in the frame AppendResponse writes
// (length prefix included), for a body of bodyLen bytes; the body, then AppendResponseTail
// with the same desc, complete the frame (see AppendRequestHead).
func AppendResponseHead(b []byte, req *Request, ret int32, bodyLen int, desc string) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = appendInt(b, 1, int64(req.Version))
	b = appendInt(b, 2, 0) // cPacketType: normal
	b = appendInt(b, 3, int64(req.RequestID))
	b = appendInt(b, 4, int64(req.MessageType))
	b = appendInt(b, 5, int64(ret))
	b = appendHead(b, 6, tSimpleList)
	b = appendHead(b, 0, tInt8)
	b = appendInt(b, 0, int64(bodyLen))
	frameLen := len(b) - start + bodyLen + responseTailLen(desc)
	binary.BigEndian.PutUint32(b[start:], uint32(frameLen))
	return b
}

// AppendResponseTail appends what follows the body in the frame AppendResponse writes.
func AppendResponseTail(b []byte, desc string) []byte {
	b = appendInt(appendHead(b, 7, tMap), 0, 0) // status: empty map
	if desc != "" {
		b = appendString(b, 8, desc)
	}
	return b
}

// responseTailLen is the length of AppendResponseTail's bytes.
func responseTailLen(desc string) int {
	n := 2 // the status map's head and its length 0
	if desc != "" {
		n += 1 + 1 + len(desc) // head, length, bytes
		if len(desc) > 255 {
			n += 3
		}
	}
	return n
}

// Response is what a client needs of a ResponsePacket.
type Response struct {
	RequestID int32
	Ret       int32  // TARS return code; 0 is success
	Body      []byte // a view into the frame given to DecodeResponse
	Desc      string // sResultDesc, when Ret is not 0
}

// FrameLen returns the length of the frame at the start of b (prefix included), or 0 if b
// holds fewer than 4 bytes. It fails on lengths below 5 or above max.
func FrameLen(b []byte, max int) (int, error) {
	if len(b) < 4 {
		return 0, nil
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < 5 || n > max {
		return 0, fmt.Errorf("tarswire: frame length %d out of range", n)
	}
	return n, nil
}

// DecodeResponse reads r from one whole frame (length prefix included).
func DecodeResponse(frame []byte, r *Response) error {
	d := decoder{b: frame[4:]}
	*r = Response{}
	for d.off < len(d.b) {
		tag, typ, err := d.head()
		if err != nil {
			return err
		}
		switch {
		case tag == 3 && typ <= tInt32 || tag == 3 && typ == tZero:
			v, err := d.int(typ)
			if err != nil {
				return err
			}
			r.RequestID = int32(v)
		case tag == 5 && (typ <= tInt32 || typ == tZero):
			v, err := d.int(typ)
			if err != nil {
				return err
			}
			r.Ret = int32(v)
		case tag == 6 && typ == tSimpleList:
			if r.Body, err = d.simpleList(); err != nil {
				return err
			}
		case tag == 8 && (typ == tString1 || typ == tString4):
			s, err := d.str(typ)
			if err != nil {
				return err
			}
			r.Desc = string(s)
		default:
			if err := d.skip(typ, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

type decoder struct {
	b   []byte
	off int
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || len(d.b)-d.off < n {
		return nil, ErrMalformed
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p, nil
}

func (d *decoder) head() (tag, typ byte, err error) {
	p, err := d.take(1)
	if err != nil {
		return 0, 0, err
	}
	tag, typ = p[0]>>4, p[0]&0x0F
	if tag == 15 {
		if p, err = d.take(1); err != nil {
			return 0, 0, err
		}
		tag = p[0]
	}
	return tag, typ, nil
}

func (d *decoder) int(typ byte) (int64, error) {
	var n int
	switch typ {
	case tZero:
		return 0, nil
	case tInt8:
		n = 1
	case tInt16:
		n = 2
	case tInt32:
		n = 4
	case tInt64:
		n = 8
	default:
		return 0, ErrMalformed
	}
	p, err := d.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return int64(int8(p[0])), nil
	case 2:
		return int64(int16(binary.BigEndian.Uint16(p))), nil
	case 4:
		return int64(int32(binary.BigEndian.Uint32(p))), nil
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

// length reads a length or count: an int field with tag 0.
func (d *decoder) length() (int, error) {
	_, typ, err := d.head()
	if err != nil {
		return 0, err
	}
	v, err := d.int(typ)
	if err != nil || v < 0 || v > int64(len(d.b)) {
		return 0, ErrMalformed
	}
	return int(v), nil
}

func (d *decoder) str(typ byte) ([]byte, error) {
	var n int
	if typ == tString1 {
		p, err := d.take(1)
		if err != nil {
			return nil, err
		}
		n = int(p[0])
	} else {
		p, err := d.take(4)
		if err != nil {
			return nil, err
		}
		n = int(binary.BigEndian.Uint32(p))
	}
	return d.take(n)
}

func (d *decoder) simpleList() ([]byte, error) {
	if _, _, err := d.head(); err != nil { // element type: int8
		return nil, err
	}
	n, err := d.length()
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

// skip skips one value of type typ; depth bounds nesting.
func (d *decoder) skip(typ byte, depth int) error {
	if depth > 64 {
		return ErrMalformed
	}
	switch typ {
	case tInt8, tInt16, tInt32, tInt64, tZero:
		_, err := d.int(typ)
		return err
	case tFloat:
		_, err := d.take(4)
		return err
	case tDouble:
		_, err := d.take(8)
		return err
	case tString1, tString4:
		_, err := d.str(typ)
		return err
	case tSimpleList:
		_, err := d.simpleList()
		return err
	case tMap, tList:
		n, err := d.length()
		if err != nil {
			return err
		}
		if typ == tMap {
			n *= 2
		}
		for range n {
			_, t, err := d.head()
			if err != nil {
				return err
			}
			if err := d.skip(t, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tStructBegin:
		for {
			_, t, err := d.head()
			if err != nil {
				return err
			}
			if t == tStructEnd {
				return nil
			}
			if err := d.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return ErrMalformed
}
