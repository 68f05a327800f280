package codec

import (
	"encoding/binary"
	"math"
	"time"
)

// RequestTimeout is the iTimeout of a request with left to go before its caller gives up: whole
// milliseconds, rounded up, so that a server's deadline for the request (from when it read it)
// is never before the caller's and a handler that gives up with its ctx answers after the call
// has timed out, not with an error of its own before; at least 1 (a request being sent has time
// left), at most math.MaxInt32 (24.8 days: the field is an int32 of milliseconds, and a server
// adds it to its clock).
func RequestTimeout(left time.Duration) int32 {
	if left <= 0 {
		return 1
	}
	ms := (left-1)/time.Millisecond + 1
	return int32(min(ms, math.MaxInt32))
}

// SetRequestTimeout writes ms over the timeout (tag 8, iTimeout) of frame, a whole request frame
// as AppendRequest or AppendRequestProto wrote it, in the width it was encoded in, without moving
// a byte: a frame encoded once and sent later (a backup request, a call retried on another
// endpoint, a call that waited for its connection) tells the server the time left then. It
// reports false, changing nothing, when ms does not fit that width (a time left is never more
// than the timeout first encoded, so it fits unless that was 0) or the frame does not start like
// a request. It skips the servant and function names and the body by their lengths: a few bytes
// read, whatever the body's size.
func SetRequestTimeout(frame []byte, ms int32) bool {
	i := requestIDAt(frame)
	if i < 0 {
		return false
	}
	i += 4
	for tag := byte(5); tag <= 6; tag++ { // sServantName, sFuncName
		if i >= len(frame) || frame[i]>>4 != tag {
			return false
		}
		switch frame[i] & 0x0F {
		case TypeString1:
			if i+2 > len(frame) {
				return false
			}
			i += 2 + int(frame[i+1])
		case TypeString4:
			if i+5 > len(frame) {
				return false
			}
			i += 5 + int(binary.BigEndian.Uint32(frame[i+1:]))
		default:
			return false
		}
	}
	// sBuffer: a simple list (its head, a 0x00 byte, the size as an int at tag 0, the bytes).
	if i+3 > len(frame) || frame[i] != 7<<4|TypeSimpleList || frame[i+1] != 0 || frame[i+2]>>4 != 0 {
		return false
	}
	n, w, ok := intAt(frame, i+2)
	if !ok || n < 0 {
		return false
	}
	i += 2 + w + int(n)
	if i >= len(frame) || frame[i]>>4 != 8 {
		return false
	}
	switch frame[i] & 0x0F {
	case TypeInt8:
		if i+2 > len(frame) || ms < -1<<7 || ms >= 1<<7 {
			return false
		}
		frame[i+1] = byte(ms)
	case TypeInt16:
		if i+3 > len(frame) || ms < -1<<15 || ms >= 1<<15 {
			return false
		}
		binary.BigEndian.PutUint16(frame[i+1:], uint16(ms))
	case TypeInt32:
		if i+5 > len(frame) {
			return false
		}
		binary.BigEndian.PutUint32(frame[i+1:], uint32(ms))
	default: // TypeZero: no room
		return false
	}
	return true
}

// intAt reads the integer whose head (tag below 15) is at frame[i]: its value and the bytes it
// takes, head included; ok is false when it is not an integer or is cut short.
func intAt(frame []byte, i int) (v int64, width int, ok bool) {
	switch frame[i] & 0x0F {
	case TypeZero:
		return 0, 1, true
	case TypeInt8:
		if i+2 <= len(frame) {
			return int64(int8(frame[i+1])), 2, true
		}
	case TypeInt16:
		if i+3 <= len(frame) {
			return int64(int16(binary.BigEndian.Uint16(frame[i+1:]))), 3, true
		}
	case TypeInt32:
		if i+5 <= len(frame) {
			return int64(int32(binary.BigEndian.Uint32(frame[i+1:]))), 5, true
		}
	}
	return 0, 0, false
}
