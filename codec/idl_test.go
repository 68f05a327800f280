package codec

import (
	"errors"
	"strings"
	"testing"
)

func TestHas(t *testing.T) {
	var e Encoder
	e.WriteInt32(1, 7)
	e.WriteStructBegin(2)
	e.WriteInt32(0, 1)
	e.WriteStructEnd()
	e.WriteString(4, "x")
	d := NewDecoder(e.Buf)
	if ok, err := d.Has(0); ok || err != nil {
		t.Fatalf("Has(0) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := d.Has(1); !ok || err != nil {
		t.Fatalf("Has(1) = %v, %v; want true, nil", ok, err)
	}
	if v, err := d.ReadInt32(1, true); v != 7 || err != nil {
		t.Fatalf("ReadInt32(1) after Has = %d, %v", v, err)
	}
	// Has(3) skips the struct at tag 2 and stops before tag 4.
	if ok, err := d.Has(3); ok || err != nil {
		t.Fatalf("Has(3) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := d.Has(4); !ok || err != nil {
		t.Fatalf("Has(4) = %v, %v; want true, nil", ok, err)
	}
	if s, err := d.ReadString(4, true); s != "x" || err != nil {
		t.Fatalf("ReadString(4) = %q, %v", s, err)
	}
	if ok, err := d.Has(5); ok || err != nil {
		t.Fatalf("Has(5) at the end = %v, %v; want false, nil", ok, err)
	}
	// A struct end means absent, and is not consumed.
	d.Reset([]byte{TypeStructEnd})
	if ok, err := d.Has(0); ok || err != nil || d.Len() != 1 {
		t.Fatalf("Has(0) at a struct end = %v, %v, %d left", ok, err, d.Len())
	}
	// Malformed skipped field.
	d.Reset([]byte{0x07, 0xff}) // tag 0 string4 truncated
	if _, err := d.Has(1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Has over a truncated field: %v, want ErrMalformed", err)
	}
}

func TestFieldError(t *testing.T) {
	_, cause := NewDecoder(nil).ReadInt32(3, true)
	err := FieldError("Mod.T", "count", cause)
	if !errors.Is(err, ErrRequired) {
		t.Fatalf("%v does not match ErrRequired", err)
	}
	if got, want := err.Error(), "decode Mod.T.count: "+cause.Error(); got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestReadKeepInto(t *testing.T) {
	var e Encoder
	e.WriteString(0, "same")
	e.WriteBytes(1, []byte{1, 2, 3})
	old := string([]byte("same"))
	dst := make([]byte, 0, 8)
	d := NewDecoder(e.Buf)
	s, err := d.ReadStringKeep(0, true, old)
	if err != nil || s != "same" {
		t.Fatalf("ReadStringKeep = %q, %v", s, err)
	}
	b, err := d.ReadBytesInto(1, true, dst)
	if err != nil || string(b) != "\x01\x02\x03" || &b[0] != &dst[:1][0] {
		t.Fatalf("ReadBytesInto = %v, %v (or not in dst's memory)", b, err)
	}
	if s, err := d.ReadStringKeep(2, false, "x"); s != "" || err != nil {
		t.Fatalf("absent string = %q, %v", s, err)
	}
	if b, err := d.ReadBytesInto(3, false, dst); len(b) != 0 || err != nil {
		t.Fatalf("absent bytes = %v, %v", b, err)
	}
	d.Reset(e.Buf)
	if n := testing.AllocsPerRun(100, func() {
		d.Reset(e.Buf)
		_, _ = d.ReadStringKeep(0, true, old)
		_, _ = d.ReadBytesInto(1, true, dst)
	}); n != 0 {
		t.Fatalf("%v allocations reading into equal values", n)
	}
	if s, _ := NewDecoder(e.Buf).ReadStringKeep(0, true, "other"); s != "same" {
		t.Fatalf("ReadStringKeep with a different old value = %q", s)
	}
}

// TestReadStringKeepLikeReadString: ReadStringKeep (whose common case skips find) reads what
// ReadString reads, with the same error or none, on every prefix of an input holding a string at
// a short head, at a long head (tag 20), an empty one, one after a skipped field and one of 255
// bytes, and leaves the Decoder at the same offset.
func TestReadStringKeepLikeReadString(t *testing.T) {
	var e Encoder
	e.WriteString(0, "abc")
	e.WriteString(1, "")
	e.WriteInt32(2, 7)
	e.WriteString(3, strings.Repeat("x", 255))
	e.WriteString(20, "long head")
	in := e.Buf
	for cut := range len(in) + 1 {
		keep, plain := NewDecoder(in[:cut]), NewDecoder(in[:cut])
		for _, tag := range []byte{0, 1, 3, 20} {
			s1, err1 := keep.ReadStringKeep(tag, tag != 1, "")
			s2, err2 := plain.ReadString(tag, tag != 1)
			if s1 != s2 || (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
				t.Fatalf("cut %d, tag %d: ReadStringKeep = %q, %v; ReadString = %q, %v", cut, tag, s1, err1, s2, err2)
			}
			if err1 != nil {
				break
			}
			if keep.Offset() != plain.Offset() {
				t.Fatalf("cut %d, tag %d: offsets %d and %d", cut, tag, keep.Offset(), plain.Offset())
			}
		}
	}
}
