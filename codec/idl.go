package codec

import "fmt"

// This file holds what code generated from .tars files needs beyond the field readers and
// writers: presence tests for fields with default values, and errors that name the field.

// Has reports whether field tag is present, skipping the fields with smaller tags before it,
// without consuming it: the next read of tag reads it. Generated code uses it for optional
// fields with a default value, which an absent field must leave untouched (the ReadX methods
// return the zero value for an absent field).
func (d *Decoder) Has(tag byte) (bool, error) {
	for {
		t, typ, n, err := d.peekHead()
		if err != nil {
			return false, err
		}
		if n == 0 || typ == TypeStructEnd || t > tag {
			return false, nil
		}
		if t == tag {
			return true, nil
		}
		d.off += n
		if err := d.skipValue(typ, 0); err != nil {
			return false, err
		}
	}
}

// FieldError wraps err, from decoding field of the struct typ (or parameter of a function),
// with their names; it matches err with errors.Is.
func FieldError(typ, field string, err error) error {
	return &fieldError{typ: typ, field: field, err: err}
}

type fieldError struct {
	typ, field string
	err        error
}

func (e *fieldError) Error() string { return fmt.Sprintf("decode %s.%s: %v", e.typ, e.field, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// ReadStringKeep is ReadString for decoding into a value that already holds old: when the
// field's bytes equal old, it returns old instead of allocating a copy of them. An absent
// field reads as "". Code generated from .tars files uses it. Unlike ReadString, it copies a
// string of up to 256 bytes into memory it shares with the other strings (and MakeList's short
// number lists) of the decode, a chunk of at most 1 KiB allocated once for all of them, which
// the decodes after a Reset go on filling: a string kept alive keeps its chunk alive.
func (d *Decoder) ReadStringKeep(tag byte, required bool, old string) (string, error) {
	// The common case, the field is next with a short head, a 1-byte length and all of its
	// bytes there, takes no further call to find it.
	if b, off := d.buf, d.off; tag <= maxShortTag && off+1 < len(b) && b[off] == tag<<4|TypeString1 {
		if end := off + 2 + int(b[off+1]); end <= len(b) {
			d.off = end
			if s := b[off+2 : end]; string(s) != old {
				return d.arenaString(s), nil
			}
			return old, nil
		}
	}
	typ, found, err := d.find(tag, required)
	if !found {
		return "", err
	}
	b, err := d.stringValue(tag, typ)
	if err != nil {
		return "", err
	}
	if string(b) == old {
		return old, nil
	}
	return d.arenaString(b), nil
}

// ReadBytesInto is ReadBytes that copies the field into dst's memory (dst[:0], growing it
// only if it is too small). An absent or empty field reads as dst[:0] (nil for a nil dst).
func (d *Decoder) ReadBytesInto(tag byte, required bool, dst []byte) ([]byte, error) {
	b, err := d.readBytes(tag, required, true)
	if err != nil {
		return nil, err
	}
	if len(b) > cap(dst) {
		d.charge(len(b))
	}
	return append(dst[:0], b...), nil
}
