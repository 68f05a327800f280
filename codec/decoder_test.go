package codec

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// encode returns the bytes written by fn.
func encode(fn func(e *Encoder)) []byte {
	var e Encoder
	fn(&e)
	return e.Buf
}

// Fields the reader does not know, of every type and nested, are skipped
// on the way to the one it asks for.
func TestDecoderSkipsUnknownFields(t *testing.T) {
	tests := []struct {
		name    string
		unknown func(e *Encoder) // written at tags 1..19
	}{
		{name: "ints", unknown: func(e *Encoder) {
			e.WriteInt8(1, 1)
			e.WriteInt16(2, 1000)
			e.WriteInt32(3, 1<<20)
			e.WriteInt64(4, 1<<40)
			e.WriteInt32(5, 0)
		}},
		{name: "floats", unknown: func(e *Encoder) { e.WriteFloat32(1, 1); e.WriteFloat64(2, 2) }},
		{name: "strings", unknown: func(e *Encoder) {
			e.WriteString(1, "abc")
			e.WriteString(2, strings.Repeat("z", 1000))
		}},
		{name: "bytes", unknown: func(e *Encoder) { e.WriteBytes(3, []byte("xyz")); e.WriteBytes(4, nil) }},
		{name: "map of lists", unknown: func(e *Encoder) {
			e.WriteMapHead(2, 2)
			for i := range 2 {
				e.WriteInt32(0, int32(i))
				e.WriteListHead(1, 3)
				e.WriteString(0, "a")
				e.WriteBytes(0, []byte("b"))
				e.WriteFloat64(0, 1)
			}
		}},
		{name: "nested structs", unknown: func(e *Encoder) {
			e.WriteStructBegin(1)
			e.WriteInt32(0, 5)
			e.WriteStructBegin(1)
			e.WriteStringMap(0, map[string]string{"k": "v"})
			e.WriteStructBegin(2)
			e.WriteStructEnd()
			e.WriteStructEnd()
			e.WriteListHead(3, 1)
			e.WriteStructBegin(0)
			e.WriteInt8(0, 1)
			e.WriteStructEnd()
			e.WriteStructEnd()
		}},
		{name: "list of int8", unknown: func(e *Encoder) {
			e.WriteListHead(7, 3)
			e.WriteInt8(0, 1)
			e.WriteInt8(0, 0)
			e.WriteInt8(0, -1)
		}},
		{name: "large tags", unknown: func(e *Encoder) {
			e.WriteString(15, "fifteen")
			e.WriteStructBegin(16)
			e.WriteInt32(200, 1)
			e.WriteStructEnd()
			e.WriteStringMap(19, map[string]string{"a": "b"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := encode(func(e *Encoder) {
				tc.unknown(e)
				e.WriteString(20, "wanted")
				e.WriteInt32(21, 42)
			})
			d := NewDecoder(b)
			got, err := d.ReadString(20, true)
			if err != nil || got != "wanted" {
				t.Fatalf("ReadString(20): got %q, %v; want %q, nil", got, err, "wanted")
			}
			n, err := d.ReadInt32(21, true)
			if err != nil || n != 42 {
				t.Errorf("ReadInt32(21): got %d, %v; want 42, nil", n, err)
			}

			// The same fields inside a struct that the reader skips whole.
			b = encode(func(e *Encoder) {
				e.WriteStructBegin(0)
				tc.unknown(e)
				e.WriteStructEnd()
				e.WriteInt32(1, 7)
			})
			d = NewDecoder(b)
			if err := d.SkipField(); err != nil {
				t.Fatalf("SkipField over the struct: %v", err)
			}
			if n, err := d.ReadInt32(1, true); err != nil || n != 7 {
				t.Errorf("ReadInt32(1) after SkipField: got %d, %v; want 7, nil", n, err)
			}

			// And inside a struct whose fields are not read at all.
			d = NewDecoder(b)
			if found, err := d.ReadStructBegin(0, true); !found || err != nil {
				t.Fatalf("ReadStructBegin: got %v, %v; want true, nil", found, err)
			}
			if err := d.ReadStructEnd(); err != nil {
				t.Fatalf("ReadStructEnd: %v", err)
			}
			if n, err := d.ReadInt32(1, true); err != nil || n != 7 {
				t.Errorf("ReadInt32(1) after ReadStructEnd: got %d, %v; want 7, nil", n, err)
			}
		})
	}
}

func TestDecoderAbsentFields(t *testing.T) {
	// Tag 3 is present; tags 1 and 2 are absent before it, tag 4 after it.
	input := encode(func(e *Encoder) { e.WriteInt32(3, 30) })
	inStruct := encode(func(e *Encoder) {
		e.WriteStructBegin(0)
		e.WriteInt32(1, 10)
		e.WriteStructEnd()
	})
	tests := []struct {
		name  string
		input []byte
		read  func(d *Decoder, req bool) (any, error)
		want  any
	}{
		{name: "int before", input: input, want: int32(0),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadInt32(2, req) }},
		{name: "int after", input: input, want: int64(0),
			read: func(d *Decoder, req bool) (any, error) { d.ReadInt32(3, true); return d.ReadInt64(4, req) }},
		{name: "bool", input: input, want: false,
			read: func(d *Decoder, req bool) (any, error) { return d.ReadBool(1, req) }},
		{name: "int8", input: input, want: int8(0),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadInt8(1, req) }},
		{name: "int16", input: input, want: int16(0),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadInt16(1, req) }},
		{name: "float", input: input, want: float32(0),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadFloat32(1, req) }},
		{name: "double", input: input, want: float64(0),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadFloat64(1, req) }},
		{name: "string", input: input, want: "",
			read: func(d *Decoder, req bool) (any, error) { return d.ReadString(1, req) }},
		{name: "bytes", input: input, want: []byte(nil),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadBytes(1, req) }},
		{name: "bytes view", input: input, want: []byte(nil),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadBytesView(1, req) }},
		{name: "string map", input: input, want: map[string]string(nil),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadStringMap(1, req) }},
		{name: "map head", input: input, want: false,
			read: func(d *Decoder, req bool) (any, error) { _, found, err := d.ReadMapHead(1, req); return found, err }},
		{name: "list head", input: input, want: false,
			read: func(d *Decoder, req bool) (any, error) { _, found, err := d.ReadListHead(1, req); return found, err }},
		{name: "struct", input: input, want: false,
			read: func(d *Decoder, req bool) (any, error) { return d.ReadStructBegin(1, req) }},
		{name: "empty input", input: nil, want: int32(0),
			read: func(d *Decoder, req bool) (any, error) { return d.ReadInt32(0, req) }},
		{name: "at struct end", input: inStruct, want: int32(0),
			read: func(d *Decoder, req bool) (any, error) {
				d.ReadStructBegin(0, true)
				d.ReadInt32(1, true)
				return d.ReadInt32(2, req)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder(tc.input)
			got, err := tc.read(d, false)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("optional: got %#v, %v; want %#v, nil", got, err, tc.want)
			}
			d.Reset(tc.input)
			_, err = tc.read(d, true)
			if !errors.Is(err, ErrRequired) {
				t.Errorf("required: got error %v, want ErrRequired", err)
			}
		})
	}

	// An absent field is left unread: tag 3 can still be read.
	d := NewDecoder(input)
	if _, err := d.ReadInt32(1, false); err != nil {
		t.Fatal(err)
	}
	if n, err := d.ReadInt32(3, true); err != nil || n != 30 {
		t.Errorf("ReadInt32(3) after an absent tag 1: got %d, %v; want 30, nil", n, err)
	}
}

func TestDecoderRequiredErrorNamesTag(t *testing.T) {
	_, err := NewDecoder(nil).ReadString(17, true)
	if !errors.Is(err, ErrRequired) || !strings.Contains(err.Error(), "tag 17") {
		t.Errorf("got %v, want ErrRequired naming tag 17", err)
	}
}

func TestDecoderIntegerWidths(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		read    func(d *Decoder) (int64, error)
		want    int64
		wantErr bool
	}{
		{name: "int16 from int8", input: "00ff", want: -1,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadInt16(0, true); return int64(v), err }},
		{name: "int32 from int16", input: "01ff7f", want: -129,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadInt32(0, true); return int64(v), err }},
		{name: "int64 from int32", input: "0280000000", want: -1 << 31,
			read: func(d *Decoder) (int64, error) { return d.ReadInt64(0, true) }},
		{name: "int8 from zero", input: "0c", want: 0,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadInt8(0, true); return int64(v), err }},
		{name: "int8 from int16 rejected", input: "010001", wantErr: true,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadInt8(0, true); return int64(v), err }},
		{name: "int16 from int32 rejected", input: "0200000001", wantErr: true,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadInt16(0, true); return int64(v), err }},
		{name: "int32 from int64 rejected", input: "030000000000000001", wantErr: true,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadInt32(0, true); return int64(v), err }},
		{name: "bool from int16 rejected", input: "010001", wantErr: true,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadBool(0, true); return int64(b2i(v)), err }},
		{name: "bool from 2", input: "0002", want: 1,
			read: func(d *Decoder) (int64, error) { v, err := d.ReadBool(0, true); return int64(b2i(v)), err }},
		{name: "int from string rejected", input: "0600", wantErr: true,
			read: func(d *Decoder) (int64, error) { return d.ReadInt64(0, true) }},
		{name: "int from float rejected", input: "0400000000", wantErr: true,
			read: func(d *Decoder) (int64, error) { return d.ReadInt64(0, true) }},
		{name: "invalid type 14", input: "0e", wantErr: true,
			read: func(d *Decoder) (int64, error) { return d.ReadInt64(0, true) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read(NewDecoder(unhex(t, tc.input)))
			if tc.wantErr {
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("got %d, %v; want an ErrMalformed error", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %d, %v; want %d, nil", got, err, tc.want)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestDecoderFloats(t *testing.T) {
	f64, err := NewDecoder(unhex(t, "043fc00000")).ReadFloat64(0, true)
	if err != nil || f64 != 1.5 {
		t.Errorf("ReadFloat64 from float: got %v, %v; want 1.5, nil", f64, err)
	}
	f32, err := NewDecoder(unhex(t, "0c")).ReadFloat32(0, true)
	if err != nil || f32 != 0 {
		t.Errorf("ReadFloat32 from zero: got %v, %v; want 0, nil", f32, err)
	}
	if _, err := NewDecoder(unhex(t, "053ff0000000000000")).ReadFloat32(0, true); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadFloat32 from double: got %v, want ErrMalformed", err)
	}
	if _, err := NewDecoder(unhex(t, "0001")).ReadFloat64(0, true); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadFloat64 from int8: got %v, want ErrMalformed", err)
	}
}

// Lengths inside strings, maps, lists and simple lists that are negative or
// larger than the input are rejected, by every reader and by skipping.
func TestDecoderMalformedLengths(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		headOK bool // the container's head is sound, only its elements are not
	}{
		{name: "string1 past end", input: "0605616263"},
		{name: "string4 past end", input: "0700000005616263"},
		{name: "string4 huge", input: "07ffffffff"},
		{name: "string4 2^31-1", input: "077fffffff"},
		{name: "simple list negative", input: "0d0000ff"},
		{name: "simple list past end", input: "0d000005616263"},
		{name: "simple list huge", input: "0d00027fffffff"},
		{name: "simple list int64 size", input: "0d00030000000000000001"},
		{name: "simple list bad element head", input: "0d010003616263"},
		{name: "simple list no size", input: "0d00"},
		{name: "list negative", input: "0900ff"},
		{name: "list huge", input: "09027fffffff0c"},
		{name: "list past end", input: "0900030c0c"},
		{name: "list size not at tag 0", input: "09100100"},
		{name: "map negative", input: "0802ffffffff"},
		{name: "map huge", input: "08027fffffff"},
		{name: "map past end", input: "080002060161160162", headOK: true},
		{name: "truncated head", input: "f0"},
		{name: "truncated int16", input: "0101"},
		{name: "truncated int32", input: "02010203"},
		{name: "truncated int64", input: "0301020304050607"},
		{name: "truncated float", input: "04010203"},
		{name: "truncated double", input: "0501020304050607"},
		{name: "unterminated struct", input: "0a0001"},
		{name: "struct end in list", input: "0900010b", headOK: true},
		{name: "invalid type", input: "0f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			input := unhex(t, tc.input)
			// Skipping on the way to a greater tag.
			if _, err := NewDecoder(input).ReadInt32(5, false); err == nil {
				t.Errorf("ReadInt32(5) skipping %x: got nil error", input)
			}
			if err := NewDecoder(input).SkipField(); err == nil {
				t.Errorf("SkipField(%x): got nil error", input)
			}
			// Reading the field itself with every reader.
			readers := map[string]func(d *Decoder) error{
				"ReadString":    func(d *Decoder) error { _, err := d.ReadString(0, true); return err },
				"ReadBytes":     func(d *Decoder) error { _, err := d.ReadBytes(0, true); return err },
				"ReadBytesView": func(d *Decoder) error { _, err := d.ReadBytesView(0, true); return err },
				"ReadStringMap": func(d *Decoder) error { _, err := d.ReadStringMap(0, true); return err },
				"ReadMapHead":   func(d *Decoder) error { _, _, err := d.ReadMapHead(0, true); return err },
				"ReadListHead":  func(d *Decoder) error { _, _, err := d.ReadListHead(0, true); return err },
				"ReadInt64":     func(d *Decoder) error { _, err := d.ReadInt64(0, true); return err },
				"ReadFloat64":   func(d *Decoder) error { _, err := d.ReadFloat64(0, true); return err },
			}
			if tc.headOK {
				delete(readers, "ReadMapHead")
				delete(readers, "ReadListHead")
			}
			for name, read := range readers {
				if err := read(NewDecoder(input)); err == nil {
					t.Errorf("%s(%x): got nil error", name, input)
				}
			}
		})
	}
}

func TestDecoderBytes(t *testing.T) {
	simple := encode(func(e *Encoder) { e.WriteBytes(1, []byte("abc")); e.WriteInt8(2, 9) })
	list := encode(func(e *Encoder) {
		e.WriteListHead(1, 3)
		e.WriteInt8(0, 'a')
		e.WriteInt8(0, 0)
		e.WriteInt8(0, -1)
	})
	tests := []struct {
		name      string
		input     []byte
		view      bool
		want      []byte
		wantAlias bool
	}{
		{name: "simple list copy", input: simple, want: []byte("abc")},
		{name: "simple list view", input: simple, view: true, want: []byte("abc"), wantAlias: true},
		{name: "list of int8 copy", input: list, want: []byte{'a', 0, 0xff}},
		{name: "list of int8 view copies", input: list, view: true, want: []byte{'a', 0, 0xff}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			input := bytes.Clone(tc.input)
			d := NewDecoder(input)
			read := d.ReadBytes
			if tc.view {
				read = d.ReadBytesView
			}
			got, err := read(1, true)
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("got %x, %v; want %x, nil", got, err, tc.want)
			}
			if tc.wantAlias && cap(got) != len(got) {
				t.Errorf("view cap %d, want cap == len %d", cap(got), len(got))
			}
			for i := range input {
				input[i] ^= 0xff
			}
			aliased := !bytes.Equal(got, tc.want) // changed with the input
			if aliased != tc.wantAlias {
				t.Errorf("aliases the input: got %v, want %v", aliased, tc.wantAlias)
			}
		})
	}
	// Appending to a view must not overwrite the rest of the input.
	d := NewDecoder(simple)
	v, _ := d.ReadBytesView(1, true)
	_ = append(v, 0xEE)
	if n, err := d.ReadInt8(2, true); err != nil || n != 9 {
		t.Errorf("field after an appended-to view: got %d, %v; want 9, nil", n, err)
	}
	// A list whose elements are not int8 is not bytes.
	bad := encode(func(e *Encoder) { e.WriteListHead(1, 1); e.WriteString(0, "x") })
	if _, err := NewDecoder(bad).ReadBytes(1, true); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadBytes of a list of strings: got %v, want ErrMalformed", err)
	}
}

func TestDecoderMapAndListHeads(t *testing.T) {
	b := encode(func(e *Encoder) {
		e.WriteMapHead(1, 1)
		e.WriteInt32(0, 5)
		e.WriteListHead(1, 2)
		e.WriteString(0, "x")
		e.WriteString(0, "y")
		e.WriteStringMap(2, map[string]string{"dup": "1"})
	})
	d := NewDecoder(b)
	n, found, err := d.ReadMapHead(1, true)
	if n != 1 || !found || err != nil {
		t.Fatalf("ReadMapHead: got %d, %v, %v; want 1, true, nil", n, found, err)
	}
	if k, err := d.ReadInt32(0, true); k != 5 || err != nil {
		t.Fatalf("map key: got %d, %v; want 5, nil", k, err)
	}
	n, found, err = d.ReadListHead(1, true)
	if n != 2 || !found || err != nil {
		t.Fatalf("ReadListHead: got %d, %v, %v; want 2, true, nil", n, found, err)
	}
	var got []string
	for range n {
		s, err := d.ReadString(0, true)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("list: got %q, want [x y]", got)
	}
	if _, _, err := d.ReadListHead(2, true); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadListHead on a map: got %v, want ErrMalformed", err)
	}

	// Duplicate keys: the last one wins. Empty maps are nil.
	dup := encode(func(e *Encoder) {
		e.WriteMapHead(0, 2)
		e.WriteString(0, "k")
		e.WriteString(1, "first")
		e.WriteString(0, "k")
		e.WriteString(1, "last")
		e.WriteStringMap(1, map[string]string{})
	})
	d = NewDecoder(dup)
	m, err := d.ReadStringMap(0, true)
	if err != nil || !reflect.DeepEqual(m, map[string]string{"k": "last"}) {
		t.Errorf("duplicate keys: got %v, %v; want map[k:last], nil", m, err)
	}
	if m, err := d.ReadStringMap(1, true); m != nil || err != nil {
		t.Errorf("empty map: got %#v, %v; want nil, nil", m, err)
	}
}

func TestDecoderPeekAndSkip(t *testing.T) {
	b := encode(func(e *Encoder) {
		e.WriteStructBegin(0)
		e.WriteInt32(20, 1000)
		e.WriteStructEnd()
	})
	d := NewDecoder(b)
	tests := []struct {
		wantTag, wantTyp byte
		skip             func() error
	}{
		{wantTag: 0, wantTyp: TypeStructBegin, skip: func() error { _, err := d.ReadStructBegin(0, true); return err }},
		{wantTag: 20, wantTyp: TypeInt16, skip: d.SkipField},
		{wantTag: 0, wantTyp: TypeStructEnd, skip: d.ReadStructEnd},
	}
	for i, tc := range tests {
		tag, typ, err := d.PeekHead()
		if err != nil || tag != tc.wantTag || typ != tc.wantTyp {
			t.Fatalf("step %d PeekHead: got %d, %d, %v; want %d, %d, nil", i, tag, typ, err, tc.wantTag, tc.wantTyp)
		}
		if tc.wantTyp == TypeStructEnd {
			if err := d.SkipField(); !errors.Is(err, ErrMalformed) {
				t.Errorf("SkipField at a struct end: got %v, want ErrMalformed", err)
			}
		}
		if err := tc.skip(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if _, _, err := d.PeekHead(); err != io.EOF {
		t.Errorf("PeekHead at end: got %v, want io.EOF", err)
	}
	if err := d.SkipField(); !errors.Is(err, ErrMalformed) {
		t.Errorf("SkipField at end: got %v, want ErrMalformed", err)
	}
	if err := d.ReadStructEnd(); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadStructEnd at end: got %v, want ErrMalformed", err)
	}
	if d.Offset() != len(b) || d.Len() != 0 {
		t.Errorf("Offset %d Len %d, want %d and 0", d.Offset(), d.Len(), len(b))
	}
}

// Deeply nested input is rejected when skipped instead of exhausting the
// stack; nesting up to the limit is fine.
func TestDecoderNestingLimit(t *testing.T) {
	nested := func(depth int, open, close string) []byte {
		var s strings.Builder
		for range depth {
			s.WriteString(open)
		}
		s.WriteString("0c")
		for range depth {
			s.WriteString(close)
		}
		return unhex(t, s.String())
	}
	tests := []struct {
		name    string
		input   []byte
		wantErr bool
	}{
		{name: "lists at limit", input: nested(maxDepth, "090001", "")},
		{name: "lists past limit", input: nested(maxDepth+1, "090001", ""), wantErr: true},
		{name: "structs at limit", input: nested(maxDepth, "0a", "0b")},
		{name: "structs past limit", input: nested(maxDepth+1, "0a", "0b"), wantErr: true},
		{name: "a million lists", input: nested(1_000_000, "090001", ""), wantErr: true},
		{name: "a million structs", input: nested(1_000_000, "0a", "0b"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := NewDecoder(tc.input).SkipField()
			if tc.wantErr != (err != nil) {
				t.Errorf("SkipField: got %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// Truncating an encoded struct anywhere yields an error, never a panic.
func TestDecoderTruncatedFields(t *testing.T) {
	b := encode(func(e *Encoder) {
		e.WriteStructBegin(0)
		e.WriteInt64(1, 1<<40)
		e.WriteString(200, strings.Repeat("s", 300))
		e.WriteStringMap(3, map[string]string{"k": "v"})
		e.WriteListHead(4, 1)
		e.WriteBytes(0, []byte("xy"))
		e.WriteFloat64(5, 1)
		e.WriteStructEnd()
	})
	for i := range len(b) {
		if err := NewDecoder(b[:i]).SkipField(); err == nil {
			t.Errorf("SkipField of %d of %d bytes: got nil error", i, len(b))
		}
	}
	if err := NewDecoder(b).SkipField(); err != nil {
		t.Errorf("SkipField of the whole struct: %v", err)
	}
}

func TestDecoderAllocs(t *testing.T) {
	b := encode(func(e *Encoder) {
		e.WriteInt64(0, 1<<40)
		e.WriteFloat64(1, 1)
		e.WriteBytes(2, []byte("view"))
		e.WriteStringMap(3, nil)
		e.WriteStructBegin(4)
		e.WriteString(0, "skipped")
		e.WriteStructEnd()
		e.WriteString(5, "")
	})
	var d Decoder
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset(b)
		d.ReadInt64(0, true)
		d.ReadFloat64(1, true)
		d.ReadBytesView(2, true)
		d.ReadStringMap(3, true)
		d.ReadString(5, true) // skips the struct at tag 4
		d.ReadInt32(6, false)
	})
	if allocs != 0 {
		t.Errorf("got %v allocs, want 0", allocs)
	}
}
