package codec

import (
	"errors"
	"fmt"
)

// ErrRequired reports that a required field is absent. Decoders wrap it
// with the tag and the offset where it was expected. The peer sent a packet
// that does not match the expected schema: treat the message as undecodable
// (for a response, fail that call with a client decode error).
var ErrRequired = errors.New("codec: required field missing")

// ErrMalformed reports input that is not valid TARS encoding: a truncated
// field, an unknown type code, a type that does not match the one asked
// for, a negative or oversized length, nesting too deep. Decoders wrap it
// with the tag and offset. A stream that produced it cannot be trusted:
// fail the message and, for a framed connection, close it.
var ErrMalformed = errors.New("codec: malformed input")

// ErrTruncated marks an error of input that ended too soon: inside a value, or before a required
// field. The bytes read were consistent so far, and more of them may decode: a packet's head read
// from the first bytes of a frame (DecodeResponseHead, DecodeRequestHead) is told from bytes
// that are no head by it. A truncated value's error also wraps ErrMalformed, a missing required
// field's ErrRequired.
var ErrTruncated = errors.New("codec: input ends too soon")

// truncated is malformed for input that ended too soon: the same error, which wraps ErrTruncated
// too.
func truncated(off int, format string, args ...any) error {
	return &cutShort{error: malformed(off, format, args...)}
}

type cutShort struct{ error }

func (e *cutShort) Unwrap() []error { return []error{e.error, ErrTruncated} }

// malformed wraps ErrMalformed with a formatted detail and the offset.
func malformed(off int, format string, args ...any) error {
	return fmt.Errorf("%w: %s (offset %d)", ErrMalformed, fmt.Sprintf(format, args...), off)
}

// required wraps ErrRequired with the tag and offset.
func required(tag byte, off int) error {
	return fmt.Errorf("%w: tag %d (offset %d)", ErrRequired, tag, off)
}

// requiredAtEnd is required for a field missing because the input ended: the same error, which
// wraps ErrTruncated too.
func requiredAtEnd(tag byte, off int) error { return &missingAtEnd{tag: tag, off: off} }

type missingAtEnd struct {
	tag byte
	off int
}

func (e *missingAtEnd) Error() string {
	return fmt.Sprintf("%v: tag %d (offset %d)", ErrRequired, e.tag, e.off)
}

func (e *missingAtEnd) Unwrap() []error { return []error{ErrRequired, ErrTruncated} }

// typeName returns a readable name of a type code for error messages.
func typeName(typ byte) string {
	switch typ {
	case TypeInt8:
		return "int8"
	case TypeInt16:
		return "int16"
	case TypeInt32:
		return "int32"
	case TypeInt64:
		return "int64"
	case TypeFloat:
		return "float"
	case TypeDouble:
		return "double"
	case TypeString1:
		return "string1"
	case TypeString4:
		return "string4"
	case TypeMap:
		return "map"
	case TypeList:
		return "list"
	case TypeStructBegin:
		return "struct begin"
	case TypeStructEnd:
		return "struct end"
	case TypeZero:
		return "zero"
	case TypeSimpleList:
		return "simple list"
	}
	return fmt.Sprintf("invalid type %d", typ)
}
