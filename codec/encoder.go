package codec

import (
	"encoding/binary"
	"math"
)

// Type codes of the TARS encoding: the low four bits of a field's head byte.
const (
	TypeInt8        = 0  // 1-byte signed integer
	TypeInt16       = 1  // 2-byte big-endian signed integer
	TypeInt32       = 2  // 4-byte big-endian signed integer
	TypeInt64       = 3  // 8-byte big-endian signed integer
	TypeFloat       = 4  // IEEE 754 binary32, big-endian
	TypeDouble      = 5  // IEEE 754 binary64, big-endian
	TypeString1     = 6  // string with a 1-byte length
	TypeString4     = 7  // string with a 4-byte big-endian length
	TypeMap         = 8  // size at tag 0, then keys at tag 0 and values at tag 1
	TypeList        = 9  // size at tag 0, then elements at tag 0
	TypeStructBegin = 10 // fields follow until a TypeStructEnd
	TypeStructEnd   = 11 // closes a struct; written at tag 0
	TypeZero        = 12 // the number 0, with no payload
	TypeSimpleList  = 13 // vector<byte>: a 0x00 byte, size at tag 0, raw bytes
)

// maxShortTag is the largest tag that fits in the head byte itself; a
// greater tag is written as 0xF0|type followed by a tag byte.
const maxShortTag = 14

// Encoder appends TARS-encoded fields to Buf. The zero value is ready to use.
// Its methods never fail and allocate only to grow Buf.
//
// An Encoder is not safe for concurrent use.
type Encoder struct {
	// Buf holds the bytes written so far. Callers may read it, append to
	// it, or hand in a pooled buffer with Reset.
	Buf []byte
}

// Reset makes e write to b[:0], keeping b's capacity.
func (e *Encoder) Reset(b []byte) { e.Buf = b[:0] }

// WriteHead writes a field head: tag<<4|typ, or 0xF0|typ and a tag byte
// when tag is 15 or more.
func (e *Encoder) WriteHead(tag byte, typ byte) { e.Buf = appendHead(e.Buf, tag, typ) }

// WriteBool writes v as an int8: 1 for true, TypeZero for false.
func (e *Encoder) WriteBool(tag byte, v bool) {
	if v {
		e.Buf = appendInt(e.Buf, tag, 1)
		return
	}
	e.Buf = appendHead(e.Buf, tag, TypeZero)
}

// WriteInt8 writes v with the smallest integer type that holds it;
// 0 is written as TypeZero.
func (e *Encoder) WriteInt8(tag byte, v int8) { e.Buf = appendInt(e.Buf, tag, int64(v)) }

// WriteInt16 writes v with the smallest integer type that holds it;
// 0 is written as TypeZero.
func (e *Encoder) WriteInt16(tag byte, v int16) { e.Buf = appendInt(e.Buf, tag, int64(v)) }

// WriteInt32 writes v with the smallest integer type that holds it;
// 0 is written as TypeZero.
func (e *Encoder) WriteInt32(tag byte, v int32) { e.Buf = appendInt(e.Buf, tag, int64(v)) }

// WriteInt64 writes v with the smallest integer type that holds it;
// 0 is written as TypeZero.
func (e *Encoder) WriteInt64(tag byte, v int64) { e.Buf = appendInt(e.Buf, tag, v) }

// WriteUint8 writes v as TARS does for an unsigned byte: as an int16 field
// (read it back with ReadInt16), in the smallest type that holds it.
func (e *Encoder) WriteUint8(tag byte, v uint8) { e.Buf = appendInt(e.Buf, tag, int64(v)) }

// WriteUint16 writes v as an int32 field (read it back with ReadInt32), in
// the smallest type that holds it.
func (e *Encoder) WriteUint16(tag byte, v uint16) { e.Buf = appendInt(e.Buf, tag, int64(v)) }

// WriteUint32 writes v as an int64 field (read it back with ReadInt64), in
// the smallest type that holds it.
func (e *Encoder) WriteUint32(tag byte, v uint32) { e.Buf = appendInt(e.Buf, tag, int64(v)) }

// WriteFloat32 writes v as TypeFloat. Unlike integers, 0 keeps its payload,
// as TarsGo writes it.
func (e *Encoder) WriteFloat32(tag byte, v float32) {
	e.Buf = binary.BigEndian.AppendUint32(appendHead(e.Buf, tag, TypeFloat), math.Float32bits(v))
}

// WriteFloat64 writes v as TypeDouble.
func (e *Encoder) WriteFloat64(tag byte, v float64) {
	e.Buf = binary.BigEndian.AppendUint64(appendHead(e.Buf, tag, TypeDouble), math.Float64bits(v))
}

// WriteString writes s as TypeString1 when it is at most 255 bytes long,
// else as TypeString4. TARS strings are bytes; s need not be valid UTF-8.
func (e *Encoder) WriteString(tag byte, s string) { e.Buf = appendString(e.Buf, tag, s) }

// WriteBytes writes b as a simple list (vector<byte>): the head, a 0x00
// byte, the size as an int at tag 0, then the bytes.
func (e *Encoder) WriteBytes(tag byte, b []byte) {
	e.Buf = append(appendBytesHead(e.Buf, tag, len(b)), b...)
}

// WriteBytesHead writes the header of a simple list of n bytes, as
// WriteBytes does; the caller then appends exactly n bytes to Buf.
func (e *Encoder) WriteBytesHead(tag byte, n int) { e.Buf = appendBytesHead(e.Buf, tag, n) }

// WriteStringMap writes m as a map<string,string>: the head, the size at
// tag 0, then each key at tag 0 and its value at tag 1. A nil map is written
// as an empty one. Entries come in Go's map iteration order.
func (e *Encoder) WriteStringMap(tag byte, m map[string]string) {
	e.Buf = appendStringMap(e.Buf, tag, m)
}

// WriteMapHead writes the head of a map of n entries; the caller then
// writes n keys at tag 0, each followed by its value at tag 1.
func (e *Encoder) WriteMapHead(tag byte, n int) {
	e.Buf = appendInt(appendHead(e.Buf, tag, TypeMap), 0, int64(n))
}

// WriteListHead writes the head of a list of n elements; the caller then
// writes n elements at tag 0.
func (e *Encoder) WriteListHead(tag byte, n int) {
	e.Buf = appendInt(appendHead(e.Buf, tag, TypeList), 0, int64(n))
}

// WriteStructBegin opens a struct field; the caller writes its fields and
// then calls WriteStructEnd.
func (e *Encoder) WriteStructBegin(tag byte) { e.Buf = appendHead(e.Buf, tag, TypeStructBegin) }

// WriteStructEnd closes the struct opened by the last unmatched
// WriteStructBegin.
func (e *Encoder) WriteStructEnd() { e.Buf = append(e.Buf, TypeStructEnd) }

// The append functions below do the encoding on a local slice, which the
// packet encoders use directly to avoid storing Buf after every field.

func appendHead(b []byte, tag, typ byte) []byte {
	if tag <= maxShortTag {
		return append(b, tag<<4|typ)
	}
	return append(b, 0xF0|typ, tag)
}

// appendInt appends v at tag in the smallest integer type that holds it.
func appendInt(b []byte, tag byte, v int64) []byte {
	if tag > maxShortTag {
		return appendIntLong(b, tag, v)
	}
	h := tag << 4
	switch {
	case v == 0:
		return append(b, h|TypeZero)
	case v == int64(int8(v)):
		return append(b, h|TypeInt8, byte(v))
	case v == int64(int16(v)):
		return append(b, h|TypeInt16, byte(v>>8), byte(v))
	case v == int64(int32(v)):
		return append(b, h|TypeInt32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return binary.BigEndian.AppendUint64(append(b, h|TypeInt64), uint64(v))
}

// appendIntLong is appendInt for tags of 15 and more.
func appendIntLong(b []byte, tag byte, v int64) []byte {
	switch {
	case v == 0:
		return append(b, 0xF0|TypeZero, tag)
	case v == int64(int8(v)):
		return append(b, 0xF0|TypeInt8, tag, byte(v))
	case v == int64(int16(v)):
		return binary.BigEndian.AppendUint16(append(b, 0xF0|TypeInt16, tag), uint16(v))
	case v == int64(int32(v)):
		return binary.BigEndian.AppendUint32(append(b, 0xF0|TypeInt32, tag), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xF0|TypeInt64, tag), uint64(v))
}

func appendString(b []byte, tag byte, s string) []byte {
	if len(s) <= math.MaxUint8 {
		b = append(appendHead(b, tag, TypeString1), byte(len(s)))
	} else {
		b = binary.BigEndian.AppendUint32(appendHead(b, tag, TypeString4), uint32(len(s)))
	}
	return append(b, s...)
}

// appendBytesHead appends a simple list's head, its 0x00 element type and
// its size n.
func appendBytesHead(b []byte, tag byte, n int) []byte {
	b = appendHead(b, tag, TypeSimpleList)
	if n == 0 {
		return append(b, 0x00, TypeZero)
	}
	return appendInt(append(b, 0x00), 0, int64(n))
}

func appendStringMap(b []byte, tag byte, m map[string]string) []byte {
	b = appendHead(b, tag, TypeMap)
	if len(m) == 0 {
		return append(b, TypeZero)
	}
	b = appendInt(b, 0, int64(len(m)))
	for k, v := range m {
		b = appendString(b, 0, k)
		b = appendString(b, 1, v)
	}
	return b
}
