package codec

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestEncoderIntSmallestType(t *testing.T) {
	tests := []struct {
		name  string
		write func(e *Encoder)
		want  string
	}{
		{name: "int32 zero", write: func(e *Encoder) { e.WriteInt32(0, 0) }, want: "0c"},
		{name: "int32 300", write: func(e *Encoder) { e.WriteInt32(1, 300) }, want: "11012c"},
		{name: "int8 1", write: func(e *Encoder) { e.WriteInt8(1, 1) }, want: "1001"},
		{name: "int8 -1", write: func(e *Encoder) { e.WriteInt8(2, -1) }, want: "20ff"},
		{name: "int8 min", write: func(e *Encoder) { e.WriteInt8(0, math.MinInt8) }, want: "0080"},
		{name: "int16 127 as int8", write: func(e *Encoder) { e.WriteInt16(0, 127) }, want: "007f"},
		{name: "int16 128", write: func(e *Encoder) { e.WriteInt16(0, 128) }, want: "010080"},
		{name: "int16 -129", write: func(e *Encoder) { e.WriteInt16(0, -129) }, want: "01ff7f"},
		{name: "int32 3000", write: func(e *Encoder) { e.WriteInt32(8, 3000) }, want: "810bb8"},
		{name: "int32 32768", write: func(e *Encoder) { e.WriteInt32(0, 32768) }, want: "0200008000"},
		{name: "int32 min", write: func(e *Encoder) { e.WriteInt32(0, math.MinInt32) }, want: "0280000000"},
		{name: "int64 small", write: func(e *Encoder) { e.WriteInt64(3, 5) }, want: "3005"},
		{name: "int64 2^31", write: func(e *Encoder) { e.WriteInt64(0, 1<<31) }, want: "030000000080000000"},
		{name: "int64 max", write: func(e *Encoder) { e.WriteInt64(0, math.MaxInt64) }, want: "037fffffffffffffff"},
		{name: "uint8 255 widens", write: func(e *Encoder) { e.WriteUint8(0, 255) }, want: "0100ff"},
		{name: "uint8 0", write: func(e *Encoder) { e.WriteUint8(0, 0) }, want: "0c"},
		{name: "uint16 65535 widens", write: func(e *Encoder) { e.WriteUint16(0, 65535) }, want: "020000ffff"},
		{name: "uint32 max widens", write: func(e *Encoder) { e.WriteUint32(0, math.MaxUint32) }, want: "0300000000ffffffff"},
		{name: "bool true", write: func(e *Encoder) { e.WriteBool(1, true) }, want: "1001"},
		{name: "bool false", write: func(e *Encoder) { e.WriteBool(1, false) }, want: "1c"},
		{name: "tag 14 short head", write: func(e *Encoder) { e.WriteInt8(14, 1) }, want: "e001"},
		{name: "tag 15 long head", write: func(e *Encoder) { e.WriteInt8(15, 1) }, want: "f00f01"},
		{name: "tag 255 zero", write: func(e *Encoder) { e.WriteInt32(255, 0) }, want: "fcff"},
		{name: "float", write: func(e *Encoder) { e.WriteFloat32(0, 1.5) }, want: "043fc00000"},
		{name: "float zero keeps payload", write: func(e *Encoder) { e.WriteFloat32(0, 0) }, want: "0400000000"},
		{name: "double", write: func(e *Encoder) { e.WriteFloat64(1, -2) }, want: "15c000000000000000"},
		{name: "empty string", write: func(e *Encoder) { e.WriteString(5, "") }, want: "5600"},
		{name: "string", write: func(e *Encoder) { e.WriteString(6, "Echo") }, want: "66044563686f"},
		{name: "bytes", write: func(e *Encoder) { e.WriteBytes(7, []byte{1, 2}) }, want: "7d0000020102"},
		{name: "empty bytes", write: func(e *Encoder) { e.WriteBytes(7, nil) }, want: "7d000c"},
		{name: "bytes head 300", write: func(e *Encoder) { e.WriteBytesHead(7, 300) }, want: "7d0001012c"},
		{name: "nil map", write: func(e *Encoder) { e.WriteStringMap(9, nil) }, want: "980c"},
		{name: "map", write: func(e *Encoder) { e.WriteStringMap(9, map[string]string{"k": "v"}) }, want: "98000106016b160176"},
		{name: "map head", write: func(e *Encoder) { e.WriteMapHead(20, 2) }, want: "f8140002"},
		{name: "list head", write: func(e *Encoder) { e.WriteListHead(1, 0) }, want: "190c"},
		{name: "struct", write: func(e *Encoder) { e.WriteStructBegin(2); e.WriteStructEnd() }, want: "2a0b"},
		{name: "raw head", write: func(e *Encoder) { e.WriteHead(3, TypeZero) }, want: "3c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e Encoder
			tc.write(&e)
			if want := unhex(t, tc.want); !bytes.Equal(e.Buf, want) {
				t.Errorf("got %x, want %x", e.Buf, want)
			}
		})
	}
}

func TestEncoderString4(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		wantHead string
	}{
		{name: "255 bytes: string1", n: 255, wantHead: "16ff"},
		{name: "256 bytes: string4", n: 256, wantHead: "1700000100"},
		{name: "70000 bytes: string4", n: 70000, wantHead: "1700011170"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e Encoder
			s := strings.Repeat("x", tc.n)
			e.WriteString(1, s)
			head := unhex(t, tc.wantHead)
			if !bytes.HasPrefix(e.Buf, head) || len(e.Buf) != len(head)+tc.n {
				t.Errorf("got head %x and %d bytes, want head %x and %d bytes", e.Buf[:len(head)], len(e.Buf), head, len(head)+tc.n)
			}
			got, err := NewDecoder(e.Buf).ReadString(1, true)
			if err != nil || got != s {
				t.Errorf("ReadString: got %d bytes, %v; want %d bytes, nil", len(got), err, tc.n)
			}
		})
	}
}

func TestEncoderReset(t *testing.T) {
	buf := make([]byte, 3, 64)
	var e Encoder
	e.Reset(buf)
	e.WriteInt8(0, 1)
	if len(e.Buf) != 2 || cap(e.Buf) != 64 {
		t.Errorf("after Reset and one field: len %d cap %d, want len 2 cap 64", len(e.Buf), cap(e.Buf))
	}
}

// Every type code written by the Encoder reads back, at small and large
// tags, with the Decoder method for it.
func TestEncoderRoundTripEveryType(t *testing.T) {
	for _, tag := range []byte{0, 1, 14, 15, 16, 200, 255} {
		var e Encoder
		e.WriteInt8(tag, -7)         // TypeInt8
		e.WriteInt16(tag, -300)      // TypeInt16
		e.WriteInt32(tag, 1<<20)     // TypeInt32
		e.WriteInt64(tag, -1<<40)    // TypeInt64
		e.WriteFloat32(tag, 3.25)    // TypeFloat
		e.WriteFloat64(tag, math.Pi) // TypeDouble
		e.WriteString(tag, "short")  // TypeString1
		long := strings.Repeat("L", 300)
		e.WriteString(tag, long)                                     // TypeString4
		e.WriteStringMap(tag, map[string]string{"a": "1", "b": "2"}) // TypeMap
		e.WriteListHead(tag, 2)                                      // TypeList
		e.WriteInt32(0, 11)
		e.WriteInt32(0, 0)
		e.WriteStructBegin(tag) // TypeStructBegin
		e.WriteString(1, "inner")
		e.WriteStructEnd()               // TypeStructEnd
		e.WriteInt64(tag, 0)             // TypeZero
		e.WriteBytes(tag, []byte("raw")) // TypeSimpleList
		e.WriteBool(tag, true)
		e.WriteUint8(tag, 200)
		e.WriteUint16(tag, 60000)
		e.WriteUint32(tag, 4000000000)

		// Fields with equal tags are read in order: each read consumes one.
		d := NewDecoder(e.Buf)
		check := func(name string, got, want any, err error) {
			t.Helper()
			if err != nil || got != want {
				t.Errorf("tag %d %s: got %v, %v; want %v, nil", tag, name, got, err, want)
			}
		}
		i8, err := d.ReadInt8(tag, true)
		check("int8", i8, int8(-7), err)
		i16, err := d.ReadInt16(tag, true)
		check("int16", i16, int16(-300), err)
		i32, err := d.ReadInt32(tag, true)
		check("int32", i32, int32(1<<20), err)
		i64, err := d.ReadInt64(tag, true)
		check("int64", i64, int64(-1<<40), err)
		f32, err := d.ReadFloat32(tag, true)
		check("float", f32, float32(3.25), err)
		f64, err := d.ReadFloat64(tag, true)
		check("double", f64, math.Pi, err)
		s, err := d.ReadString(tag, true)
		check("string1", s, "short", err)
		s, err = d.ReadString(tag, true)
		check("string4", s, long, err)
		m, err := d.ReadStringMap(tag, true)
		check("map", len(m), 2, err)
		check("map[a]", m["a"], "1", nil)
		check("map[b]", m["b"], "2", nil)
		n, found, err := d.ReadListHead(tag, true)
		check("list size", n, 2, err)
		check("list found", found, true, nil)
		e0, err := d.ReadInt32(0, true)
		check("list[0]", e0, int32(11), err)
		e1, err := d.ReadInt32(0, true)
		check("list[1]", e1, int32(0), err)
		found, err = d.ReadStructBegin(tag, true)
		check("struct begin", found, true, err)
		s, err = d.ReadString(1, true)
		check("struct field", s, "inner", err)
		check("struct end", nil, nil, d.ReadStructEnd())
		z, err := d.ReadInt64(tag, true)
		check("zero", z, int64(0), err)
		b, err := d.ReadBytes(tag, true)
		check("simple list", string(b), "raw", err)
		bo, err := d.ReadBool(tag, true)
		check("bool", bo, true, err)
		u8, err := d.ReadInt16(tag, true)
		check("uint8", u8, int16(200), err)
		u16, err := d.ReadInt32(tag, true)
		check("uint16", u16, int32(60000), err)
		u32, err := d.ReadInt64(tag, true)
		check("uint32", u32, int64(4000000000), err)
		if d.Len() != 0 {
			t.Errorf("tag %d: %d bytes left unread, want 0", tag, d.Len())
		}
	}
}

func TestEncoderNoAllocs(t *testing.T) {
	e := Encoder{Buf: make([]byte, 0, 4096)}
	m := map[string]string{"key": "value", "k2": "v2"}
	body := []byte("body")
	allocs := testing.AllocsPerRun(100, func() {
		e.Reset(e.Buf)
		e.WriteBool(0, true)
		e.WriteInt64(1, math.MaxInt64)
		e.WriteUint32(2, 7)
		e.WriteFloat32(3, 1)
		e.WriteFloat64(4, 1)
		e.WriteString(5, "servant")
		e.WriteBytes(6, body)
		e.WriteStringMap(7, m)
		e.WriteListHead(8, 1)
		e.WriteStructBegin(0)
		e.WriteStructEnd()
		e.WriteInt32(200, 9)
	})
	if allocs != 0 {
		t.Errorf("Encoder into a large enough buffer: got %v allocs, want 0", allocs)
	}
}
