package codec

import (
	"encoding/binary"
	"io"
	"math"
)

// maxDepth bounds how deeply nested lists, maps and structs may be when the
// Decoder skips them, so that hostile input cannot exhaust the stack.
const maxDepth = 256

// Decoder reads TARS-encoded fields from a byte slice, in ascending tag
// order, the TARS way: to read tag T it skips fields with a smaller tag; a
// field with a greater tag, a struct end or the end of the input means the
// field is absent, and it is left unread for the next read.
//
// For each ReadX method, an absent field that is not required reads as the
// zero value with a nil error; an absent required field is an error
// wrapping ErrRequired that names the tag. Integer readers accept any
// integer type no wider than the one asked for (and TypeZero); a wider type
// is an error wrapping ErrMalformed, as in TarsGo, even when the value would
// fit. Every method returns an error for malformed input and none panics; no
// length read from the input makes the Decoder allocate more than the
// remaining input, and container sizes are checked against it before they
// are returned. Over a whole decode, what a Decoder copies and what
// MakeList and MakeMap set aside from counts in the input stay within 7
// bytes per input byte (see MakeList). Structs nest at most 256 deep. After
// an error the Decoder's position is unspecified.
//
// The zero Decoder reads an empty input.
//
// The Decoder allocates only for strings, maps and copied byte slices. The
// strings ReadStringKeep returns, ReadStringMap's keys and values and the
// short number lists MakeList makes share chunks of at most 1 KiB, over a
// decode and the decodes that follow a Reset (see ReadStringKeep): keeping
// one keeps its chunk alive. It is not safe for concurrent use.
type Decoder struct {
	buf      []byte
	off      int
	reserved int     // bytes of the allowance given out (see reserve)
	depth    int     // structs begun and not ended
	arena    []byte  // the chunk strings are made in (see arenaAlloc), whole
	arenaAt  uintptr // the address of the Decoder that made it: a copy does not add to it
}

// NewDecoder returns a Decoder reading b. A Decoder can also be declared as
// a value and pointed at its input with Reset, which does not allocate.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Reset makes d read b from its start. It keeps the chunk d makes strings in, to fill it
// further (see ReadStringKeep).
func (d *Decoder) Reset(b []byte) {
	*d = Decoder{buf: b, arena: d.arena, arenaAt: d.arenaAt}
}

// Len returns the number of unread bytes.
func (d *Decoder) Len() int { return len(d.buf) - d.off }

// Offset returns the number of bytes read so far.
func (d *Decoder) Offset() int { return d.off }

// PeekHead returns the tag and type of the field at the current position
// without consuming it. At the end of the input it returns io.EOF.
func (d *Decoder) PeekHead() (tag, typ byte, err error) {
	tag, typ, n, err := d.peekHead()
	if err == nil && n == 0 {
		err = io.EOF
	}
	return tag, typ, err
}

// peekHead decodes the head at the current position. n is the head's size,
// 0 at the end of the input.
func (d *Decoder) peekHead() (tag, typ byte, n int, err error) {
	if d.off >= len(d.buf) {
		return 0, 0, 0, nil
	}
	h := d.buf[d.off]
	tag, typ = h>>4, h&0x0f
	if tag != 15 {
		return tag, typ, 1, nil
	}
	if d.off+1 >= len(d.buf) {
		return 0, 0, 0, truncated(d.off, "truncated head")
	}
	return d.buf[d.off+1], typ, 2, nil
}

// find positions d after the head of field tag and returns the field's type.
// found is false when the field is absent (err is then non-nil only when
// req is set). The common case, the field is next with a short head,
// returns without a further call.
func (d *Decoder) find(tag byte, req bool) (typ byte, found bool, err error) {
	if d.off < len(d.buf) {
		if h := d.buf[d.off]; h>>4 == tag && tag <= maxShortTag && h&0x0f != TypeStructEnd {
			d.off++
			return h & 0x0f, true, nil
		}
	} else if !req {
		return 0, false, nil
	}
	return d.findSlow(tag, req)
}

// findSlow is find for the other cases: skipping fields, long heads,
// absent fields.
func (d *Decoder) findSlow(tag byte, req bool) (typ byte, found bool, err error) {
	for {
		t, typ, n, err := d.peekHead()
		if err != nil {
			return 0, false, err
		}
		if n == 0 || typ == TypeStructEnd || t > tag {
			if req && n == 0 {
				return 0, false, requiredAtEnd(tag, d.off)
			}
			if req {
				return 0, false, required(tag, d.off)
			}
			return 0, false, nil
		}
		d.off += n
		if t == tag {
			return typ, true, nil
		}
		if err := d.skipValue(typ, 0); err != nil {
			return 0, false, err
		}
	}
}

// need reports an error unless n more bytes are available.
func (d *Decoder) need(n int) error {
	if n > len(d.buf)-d.off {
		return truncated(d.off, "need %d bytes, %d left", n, len(d.buf)-d.off)
	}
	return nil
}

func mismatch(off int, tag, got, want byte) error {
	return malformed(off, "tag %d: got %s, want %s", tag, typeName(got), typeName(want))
}

// readInt reads field tag as an integer no wider than type widest. The
// common case, the field is next with a short head and its payload is
// there, takes no further call.
func (d *Decoder) readInt(tag byte, req bool, widest byte) (int64, error) {
	b, off := d.buf, d.off
	if off < len(b) && tag <= maxShortTag && b[off]>>4 == tag {
		switch typ := b[off] & 0x0f; {
		case typ == TypeZero:
			d.off = off + 1
			return 0, nil
		case typ == TypeInt8 && len(b)-off >= 2:
			d.off = off + 2
			return int64(int8(b[off+1])), nil
		case typ == TypeInt16 && len(b)-off >= 3 && widest >= TypeInt16:
			d.off = off + 3
			return int64(int16(binary.BigEndian.Uint16(b[off+1:]))), nil
		case typ == TypeInt32 && len(b)-off >= 5 && widest >= TypeInt32:
			d.off = off + 5
			return int64(int32(binary.BigEndian.Uint32(b[off+1:]))), nil
		}
	}
	typ, found, err := d.find(tag, req)
	if !found {
		return 0, err
	}
	return d.intValue(tag, typ, widest)
}

// intValue reads the payload of an integer field of type typ.
func (d *Decoder) intValue(tag, typ, widest byte) (int64, error) {
	b := d.buf[d.off:]
	switch {
	case typ == TypeZero:
		return 0, nil
	case typ == TypeInt8 && len(b) >= 1:
		d.off++
		return int64(int8(b[0])), nil
	case typ == TypeInt16 && len(b) >= 2 && widest >= TypeInt16:
		d.off += 2
		return int64(int16(binary.BigEndian.Uint16(b))), nil
	case typ == TypeInt32 && len(b) >= 4 && widest >= TypeInt32:
		d.off += 4
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	case typ == TypeInt64 && len(b) >= 8 && widest >= TypeInt64:
		d.off += 8
		return int64(binary.BigEndian.Uint64(b)), nil
	}
	if typ > widest {
		return 0, mismatch(d.off, tag, typ, widest)
	}
	return 0, d.need(1 << typ) // 1, 2, 4 or 8 bytes
}

// ReadBool reads field tag, an int8, as a bool: any non-zero value is true.
func (d *Decoder) ReadBool(tag byte, required bool) (bool, error) {
	v, err := d.readInt(tag, required, TypeInt8)
	return v != 0, err
}

// ReadInt8 reads field tag as an int8.
func (d *Decoder) ReadInt8(tag byte, required bool) (int8, error) {
	v, err := d.readInt(tag, required, TypeInt8)
	return int8(v), err
}

// ReadInt16 reads field tag as an int16; int8 fields are accepted.
func (d *Decoder) ReadInt16(tag byte, required bool) (int16, error) {
	v, err := d.readInt(tag, required, TypeInt16)
	return int16(v), err
}

// ReadInt32 reads field tag as an int32; int8 and int16 fields are accepted.
func (d *Decoder) ReadInt32(tag byte, required bool) (int32, error) {
	v, err := d.readInt(tag, required, TypeInt32)
	return int32(v), err
}

// ReadInt64 reads field tag as an int64; any integer field is accepted.
func (d *Decoder) ReadInt64(tag byte, required bool) (int64, error) {
	return d.readInt(tag, required, TypeInt64)
}

// ReadFloat32 reads field tag as a float (or TypeZero).
func (d *Decoder) ReadFloat32(tag byte, required bool) (float32, error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return 0, err
	}
	switch typ {
	case TypeZero:
		return 0, nil
	case TypeFloat:
		if err := d.need(4); err != nil {
			return 0, err
		}
		v := math.Float32frombits(binary.BigEndian.Uint32(d.buf[d.off:]))
		d.off += 4
		return v, nil
	}
	return 0, mismatch(d.off, tag, typ, TypeFloat)
}

// ReadFloat64 reads field tag as a double; float fields (and TypeZero) are
// accepted.
func (d *Decoder) ReadFloat64(tag byte, required bool) (float64, error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return 0, err
	}
	switch typ {
	case TypeZero:
		return 0, nil
	case TypeFloat:
		if err := d.need(4); err != nil {
			return 0, err
		}
		v := math.Float32frombits(binary.BigEndian.Uint32(d.buf[d.off:]))
		d.off += 4
		return float64(v), nil
	case TypeDouble:
		if err := d.need(8); err != nil {
			return 0, err
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(d.buf[d.off:]))
		d.off += 8
		return v, nil
	}
	return 0, mismatch(d.off, tag, typ, TypeDouble)
}

// stringValue returns a view of the payload of a string field of type typ.
func (d *Decoder) stringValue(tag, typ byte) ([]byte, error) {
	var n int
	switch typ {
	case TypeString1:
		if err := d.need(1); err != nil {
			return nil, err
		}
		n = int(d.buf[d.off])
		d.off++
	case TypeString4:
		if err := d.need(4); err != nil {
			return nil, err
		}
		u := binary.BigEndian.Uint32(d.buf[d.off:])
		d.off += 4
		if uint64(u) > uint64(len(d.buf)-d.off) {
			return nil, truncated(d.off, "tag %d: string length %d exceeds the %d bytes left", tag, u, len(d.buf)-d.off)
		}
		n = int(u)
	default:
		return nil, mismatch(d.off, tag, typ, TypeString1)
	}
	if err := d.need(n); err != nil {
		return nil, err
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b, nil
}

// ReadString reads field tag as a string (TypeString1 or TypeString4).
func (d *Decoder) ReadString(tag byte, required bool) (string, error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return "", err
	}
	b, err := d.stringValue(tag, typ)
	if err != nil {
		return "", err
	}
	d.charge(len(b))
	return string(b), nil
}

// size reads a container size (an int at tag 0) and checks it against the
// remaining input, given that each element takes at least minElem bytes.
func (d *Decoder) size(tag byte, minElem int) (int, error) {
	v, err := d.readInt(0, true, TypeInt32)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, malformed(d.off, "tag %d: negative size %d", tag, v)
	}
	if left := len(d.buf) - d.off; v > int64(left/minElem) {
		return 0, truncated(d.off, "tag %d: size %d exceeds the %d bytes left", tag, v, left)
	}
	return int(v), nil
}

// simpleListSize reads what follows a simple list's head: the 0x00 element
// type and the size.
func (d *Decoder) simpleListSize(tag byte) (int, error) {
	if d.off >= len(d.buf) {
		return 0, d.need(1)
	}
	if d.buf[d.off] != 0x00 {
		return 0, malformed(d.off, "tag %d: simple list element head is 0x%02x, want 0x00", tag, d.buf[d.off])
	}
	d.off++
	return d.size(tag, 1)
}

// readBytes reads field tag as a vector<byte>; from a simple list it
// returns a view when view is set.
func (d *Decoder) readBytes(tag byte, req, view bool) ([]byte, error) {
	typ, found, err := d.find(tag, req)
	if !found {
		return nil, err
	}
	switch typ {
	case TypeSimpleList:
		n, err := d.simpleListSize(tag)
		if err != nil || n == 0 {
			return nil, err
		}
		b := d.buf[d.off : d.off+n : d.off+n]
		d.off += n
		if view {
			return b, nil
		}
		d.charge(n)
		return append([]byte(nil), b...), nil
	case TypeList:
		n, err := d.size(tag, 1)
		if err != nil || n == 0 {
			return nil, err
		}
		// Each element takes at least one byte, but a list claiming n of
		// them may hold fewer: set aside what the allowance permits and
		// grow as they are read.
		b := make([]byte, 0, d.reserve(n, 1))
		for range n {
			v, err := d.readInt(0, true, TypeInt8)
			if err != nil {
				return nil, err
			}
			b = append(b, byte(v))
		}
		return b, nil
	}
	return nil, mismatch(d.off, tag, typ, TypeSimpleList)
}

// ReadBytes reads field tag as a vector<byte>, written either as a simple
// list or as a list of int8, and returns a copy. An absent or empty field
// reads as nil.
func (d *Decoder) ReadBytes(tag byte, required bool) ([]byte, error) {
	return d.readBytes(tag, required, false)
}

// ReadBytesView is ReadBytes without the copy: from a simple list it
// returns a sub-slice of the input, valid as long as the input is and with
// its capacity clipped to its length, so appending to it cannot overwrite
// the input. A list of int8 is still copied.
func (d *Decoder) ReadBytesView(tag byte, required bool) ([]byte, error) {
	return d.readBytes(tag, required, true)
}

// ReadStringMap reads field tag as a map<string,string>. It returns nil when
// the field is absent or the map is empty. A key that appears twice keeps
// its last value. The keys and values share the Decoder's chunks, as
// ReadStringKeep's strings do. On an error in its entries it returns the
// entries read so far with the error, as a list's decode keeps its elements
// (a map dropped there would be memory no bound accounts for).
func (d *Decoder) ReadStringMap(tag byte, required bool) (map[string]string, error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return nil, err
	}
	if typ != TypeMap {
		return nil, mismatch(d.off, tag, typ, TypeMap)
	}
	// Each entry takes at least 4 bytes: two string heads and lengths.
	n, err := d.size(tag, 4)
	if err != nil || n == 0 {
		return nil, err
	}
	// Presize from the allowance (see MakeMap): memory stays proportional
	// to the input even for a map claiming many entries of empty strings;
	// larger maps grow as entries are read.
	m := MakeMap[string, string](d, n)
	for range n {
		k, err := d.ReadStringKeep(0, true, "")
		if err != nil {
			return m, err
		}
		v, err := d.ReadStringKeep(1, true, "")
		if err != nil {
			return m, err
		}
		m[k] = v
	}
	return m, nil
}

// ReadMapHead reads the head and size of map field tag; the caller then
// reads n keys at tag 0, each followed by its value at tag 1. n is at most
// Len()/2, but n entries may still take far more memory than the input: size
// the map with MakeMap, not with n.
func (d *Decoder) ReadMapHead(tag byte, required bool) (n int, found bool, err error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return 0, false, err
	}
	if typ != TypeMap {
		return 0, true, mismatch(d.off, tag, typ, TypeMap)
	}
	n, err = d.size(tag, 2)
	return n, true, err
}

// ReadListHead reads the head and size of list field tag; the caller then
// reads n elements at tag 0. n is at most Len(), but n elements may still
// take far more memory than the input (a struct element takes two bytes on
// the wire): size the slice with MakeList, not with n. A vector<byte> is read
// with ReadBytes instead.
func (d *Decoder) ReadListHead(tag byte, required bool) (n int, found bool, err error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return 0, false, err
	}
	if typ != TypeList {
		return 0, true, mismatch(d.off, tag, typ, TypeList)
	}
	n, err = d.size(tag, 1)
	return n, true, err
}

// ReadStructBegin reads the head of struct field tag; when found, the
// caller reads the struct's fields and then calls ReadStructEnd. Structs
// begun and not yet ended may nest 256 deep: a deeper one is an error, so
// that the recursive decoder of a self-nesting struct cannot be driven into
// an unbounded stack by a few bytes per level.
func (d *Decoder) ReadStructBegin(tag byte, required bool) (found bool, err error) {
	typ, found, err := d.find(tag, required)
	if !found {
		return false, err
	}
	if typ != TypeStructBegin {
		return true, mismatch(d.off, tag, typ, TypeStructBegin)
	}
	if d.depth >= maxDepth {
		return true, malformed(d.off, "structs nested deeper than %d", maxDepth)
	}
	d.depth++
	return true, nil
}

// ReadStructEnd skips the fields of the current struct that were not read
// and consumes its struct end.
func (d *Decoder) ReadStructEnd() error {
	for {
		_, typ, n, err := d.peekHead()
		if err != nil {
			return err
		}
		if n == 0 {
			return malformed(d.off, "missing struct end")
		}
		d.off += n
		if typ == TypeStructEnd {
			if d.depth > 0 {
				d.depth--
			}
			return nil
		}
		if err := d.skipValue(typ, 0); err != nil {
			return err
		}
	}
}

// SkipField skips the whole field at the current position, including
// nested structs, maps and lists. A struct end is not a field: SkipField
// returns an error there (ReadStructEnd consumes it), as it does at the end
// of the input.
func (d *Decoder) SkipField() error {
	_, typ, n, err := d.peekHead()
	if err != nil {
		return err
	}
	if n == 0 {
		return malformed(d.off, "no field to skip at end of input")
	}
	if typ == TypeStructEnd {
		return malformed(d.off, "struct end is not a field")
	}
	d.off += n
	return d.skipValue(typ, 0)
}

// skipValue skips the payload of a field of type typ whose head has been
// read; depth counts the enclosing containers being skipped.
func (d *Decoder) skipValue(typ byte, depth int) error {
	var n int
	switch typ {
	case TypeZero:
		return nil
	case TypeInt8:
		n = 1
	case TypeInt16:
		n = 2
	case TypeInt32, TypeFloat:
		n = 4
	case TypeInt64, TypeDouble:
		n = 8
	case TypeString1, TypeString4:
		_, err := d.stringValue(0, typ)
		return err
	case TypeSimpleList:
		var err error
		if n, err = d.simpleListSize(0); err != nil {
			return err
		}
	case TypeList, TypeMap:
		if depth >= maxDepth {
			return malformed(d.off, "nesting deeper than %d", maxDepth)
		}
		minElem := 1
		if typ == TypeMap {
			minElem = 2
		}
		count, err := d.size(0, minElem)
		if err != nil {
			return err
		}
		if typ == TypeMap {
			count *= 2
		}
		for range count {
			_, t, hn, err := d.peekHead()
			if err != nil {
				return err
			}
			if hn == 0 {
				return d.need(1)
			}
			if t == TypeStructEnd {
				return malformed(d.off, "struct end inside a container")
			}
			d.off += hn
			if err := d.skipValue(t, depth+1); err != nil {
				return err
			}
		}
		return nil
	case TypeStructBegin:
		if depth >= maxDepth {
			return malformed(d.off, "nesting deeper than %d", maxDepth)
		}
		for {
			_, t, hn, err := d.peekHead()
			if err != nil {
				return err
			}
			if hn == 0 {
				return malformed(d.off, "missing struct end")
			}
			d.off += hn
			if t == TypeStructEnd {
				return nil
			}
			if err := d.skipValue(t, depth+1); err != nil {
				return err
			}
		}
	default:
		return malformed(d.off, "cannot skip %s", typeName(typ))
	}
	if err := d.need(n); err != nil {
		return err
	}
	d.off += n
	return nil
}
