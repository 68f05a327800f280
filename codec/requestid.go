package codec

import "encoding/binary"

// RequestIDUnassigned is the request id a client encodes into a request frame whose id is given
// later, by the connection that sends it (SetRequestID). An id outside the int16 range is
// encoded as a 4-byte int32, so the real id can be written over it in place: the frame is
// encoded once, off the event loop, and never re-encoded to change its id.
const RequestIDUnassigned int32 = 1 << 30

// RequestIDAuth is the request id of TARS authentication's request (package auth), a
// connection's first packet: no call takes it, so that a peer answering that request twice
// answers no call.
const RequestIDAuth int32 = 1

// SetRequestID writes id over the request id (tag 4) of frame, a whole request frame (length
// header included) as AppendRequest or AppendRequestProto wrote it, without moving a byte. It
// reports false, changing nothing, when the frame's id is not a 4-byte int32 field (it was
// encoded from an id in the int16 range) or the frame does not start like a request. It reads
// the frame's first four fields only: a few bytes.
func SetRequestID(frame []byte, id int32) bool {
	at := requestIDAt(frame)
	if at < 0 {
		return false
	}
	binary.BigEndian.PutUint32(frame[at:], uint32(id))
	return true
}

// RequestIDOf returns the request id of frame as SetRequestID would find it, and false when it
// would not find one.
func RequestIDOf(frame []byte) (int32, bool) {
	at := requestIDAt(frame)
	if at < 0 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[at:])), true
}

// requestIDAt returns the offset of the 4 bytes of frame's request id, or -1. Tags 1 to 3
// (iVersion, cPacketType, iMessageType) are integers of any width before it.
func requestIDAt(frame []byte) int {
	i := 4 // the length header
	for tag := byte(1); tag <= 3; tag++ {
		if i >= len(frame) || frame[i]>>4 != tag {
			return -1
		}
		var n int
		switch frame[i] & 0x0F {
		case TypeZero:
		case TypeInt8:
			n = 1
		case TypeInt16:
			n = 2
		case TypeInt32:
			n = 4
		default:
			return -1
		}
		i += 1 + n
	}
	if i+5 > len(frame) || frame[i] != 4<<4|TypeInt32 {
		return -1
	}
	return i + 1
}
