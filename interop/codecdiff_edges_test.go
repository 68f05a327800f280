package interop_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	tgcodec "github.com/TarsCloud/TarsGo/tars/protocol/codec"

	"github.com/tarscomm/tarscomm/codec"
)

// TestCodecDiffIntWidths reads every integer head a peer may send (zero tag, int8, int16,
// int32, int64 at their boundaries, short and long tags) as every integer type, with both
// decoders: they must agree on accepting it (a narrower-or-equal head, as TarsCpp's
// TarsInputStream::read accepts) and on the value.
func TestCodecDiffIntWidths(t *testing.T) {
	vals := []int64{0, 1, -1, 127, -128, 128, -129, 32767, -32768, 32768, -32769,
		math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt64, math.MinInt64}
	heads := []byte{codec.TypeZero, codec.TypeInt8, codec.TypeInt16, codec.TypeInt32, codec.TypeInt64}
	readers := []cdKind{cdBool, cdInt8, cdInt16, cdInt32, cdInt64, cdUint8, cdUint16, cdUint32}
	for _, tag := range []byte{0, 3, 14, 15, 200, 255} {
		for _, typ := range heads {
			for _, v := range vals {
				var e codec.Encoder
				e.WriteHead(tag, typ)
				switch typ {
				case codec.TypeZero:
					if v != 0 {
						continue
					}
				case codec.TypeInt8:
					e.Buf = append(e.Buf, byte(v))
				case codec.TypeInt16:
					e.Buf = append(e.Buf, byte(v>>8), byte(v))
				case codec.TypeInt32:
					e.Buf = append(e.Buf, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
				case codec.TypeInt64:
					for s := 56; s >= 0; s -= 8 {
						e.Buf = append(e.Buf, byte(v>>s))
					}
				}
				for _, k := range readers {
					for _, req := range []bool{true, false} {
						plan := []cdRead{{Tag: tag, Kind: k, Req: req}}
						ours, theirs := cdReadOurs(e.Buf, plan), cdReadTheirs(e.Buf, plan)
						if ours.String() != theirs.String() {
							t.Errorf("% x read as %s: tarscomm %s, TarsGo %s", e.Buf, k, ours.Detail(), theirs.Detail())
						}
					}
				}
			}
		}
	}
}

// TestCodecDiffEncodeInts writes every integer boundary at short and long tags with both
// encoders: the bytes must be identical (smallest width, zero as TypeZero).
func TestCodecDiffEncodeInts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tag := range []byte{0, 1, 14, 15, 16, 200, 255} {
		for i := range 5000 {
			var kind cdKind
			var v int64
			if i < int(cdFloat) {
				kind = cdKind(i)
			} else {
				kind = cdKind(r.IntN(int(cdFloat)))
			}
			f := cdRandField(r, tag, 3)
			f.Kind = kind
			switch kind {
			case cdBool:
				v = int64(r.IntN(2))
			case cdInt8:
				v = cdRandInt(r, 8)
			case cdInt16:
				v = cdRandInt(r, 16)
			case cdInt32:
				v = cdRandInt(r, 32)
			case cdInt64:
				v = cdRandInt(r, 64)
			case cdUint8:
				v = cdRandUint(r, 8)
			case cdUint16:
				v = cdRandUint(r, 16)
			case cdUint32:
				v = cdRandUint(r, 32)
			}
			f.I = v
			var e codec.Encoder
			cdWriteOursOne(&e, f)
			b := tgcodec.NewBuffer()
			cdWriteTheirsOne(b, f)
			if !bytes.Equal(e.Buf, b.ToBytes()) {
				t.Fatalf("%s %d at tag %d: tarscomm % x, TarsGo % x", kind, v, tag, e.Buf, b.ToBytes())
			}
		}
	}
	// Empty containers, empty strings, 255/256-byte strings, floats 0 and -0.
	for _, f := range []cdField{
		{Tag: 1, Kind: cdString}, {Tag: 1, Kind: cdString, S: string(make([]byte, 255))},
		{Tag: 1, Kind: cdString, S: string(make([]byte, 256))}, {Tag: 20, Kind: cdBytes},
		{Tag: 2, Kind: cdListInt32}, {Tag: 2, Kind: cdMapSS}, {Tag: 2, Kind: cdListSt},
		{Tag: 2, Kind: cdStruct}, {Tag: 30, Kind: cdMapISt}, {Tag: 3, Kind: cdFloat},
		{Tag: 3, Kind: cdDouble, F: math.Copysign(0, -1)}, {Tag: 3, Kind: cdDouble, F: math.Inf(-1)},
	} {
		var e codec.Encoder
		cdWriteOursOne(&e, f)
		b := tgcodec.NewBuffer()
		cdWriteTheirsOne(b, f)
		if !bytes.Equal(e.Buf, b.ToBytes()) {
			t.Errorf("%s %+v: tarscomm % x, TarsGo % x", f.Kind, f, e.Buf, b.ToBytes())
		}
	}
}

// TestCodecDiffTruncatedAnywhere cuts random valid messages at every byte and reads every
// field as required: tarscomm must refuse every strict prefix (TarsCpp's reader throws on a
// read past the end; TarsGo's does not check and is no reference here).
func TestCodecDiffTruncatedAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 400 {
		fs := cdRandFields(r, 0)
		if len(fs) == 0 {
			continue
		}
		var e codec.Encoder
		cdWriteOurs(&e, fs)
		plan := cdPlanAll(fs)
		if tr := cdReadOurs(e.Buf, plan); tr.Err != nil {
			t.Fatalf("whole message refused: %v", tr.Err)
		}
		for n := range len(e.Buf) {
			if tr := cdReadOurs(e.Buf[:n], plan); tr.Err == nil {
				t.Fatalf("prefix of %d of % x accepted:\n%s", n, e.Buf, tr)
			}
		}
	}
}

// cdPlanAll reads every field of fs, as required, with its own type.
func cdPlanAll(fs []cdField) []cdRead {
	var p []cdRead
	for _, f := range fs {
		rd := cdRead{Tag: f.Tag, Kind: f.Kind, Req: true}
		switch f.Kind {
		case cdStruct:
			rd.Sub = cdPlanAll(f.St)
		case cdListSt:
			if len(f.LSt) > 0 {
				rd.Sub = cdPlanAll(f.LSt[0])
				for _, st := range f.LSt[1:] {
					if cdSig(st) != cdSig(f.LSt[0]) {
						rd.Sub = nil
					}
				}
			}
		case cdMapISt:
			if len(f.MISt) > 0 {
				rd.Sub = cdPlanAll(f.MISt[0].V)
				for _, en := range f.MISt[1:] {
					if cdSig(en.V) != cdSig(f.MISt[0].V) {
						rd.Sub = nil
					}
				}
			}
		}
		p = append(p, rd)
	}
	return p
}

func cdSig(fs []cdField) string {
	var b []byte
	for _, f := range fs {
		b = append(b, f.Tag, byte(f.Kind))
	}
	return string(b)
}

// TestCodecDiffHostileLengths gives both sides lengths that claim far more than the input
// holds: tarscomm must refuse each without allocating anything near the claimed size.
func TestCodecDiffHostileLengths(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		kind cdKind
	}{
		{"string4 2GiB", []byte{0x17, 0x7f, 0xff, 0xff, 0xff, 'a'}, cdString},
		{"string4 4GiB", []byte{0x17, 0xff, 0xff, 0xff, 0xff, 'a'}, cdString},
		{"string1 over", []byte{0x16, 200, 'a'}, cdString},
		{"simple list 2G", []byte{0x1d, 0x00, 0x02, 0x7f, 0xff, 0xff, 0xff, 1, 2}, cdBytes},
		{"byte list 2G", []byte{0x19, 0x02, 0x7f, 0xff, 0xff, 0xff, 0x0c, 0x0c}, cdBytes},
		{"list 2G", []byte{0x19, 0x02, 0x7f, 0xff, 0xff, 0xff, 0x0c, 0x0c}, cdListInt32},
		{"list negative", []byte{0x19, 0x02, 0x80, 0x00, 0x00, 0x00}, cdListInt32},
		{"map 2G", []byte{0x18, 0x02, 0x7f, 0xff, 0xff, 0xff, 0x06, 0x00, 0x16, 0x00}, cdMapSS},
		{"struct list 2G", []byte{0x19, 0x02, 0x7f, 0xff, 0xff, 0xff, 0x0a, 0x0b}, cdListSt},
		{"struct map 2G", []byte{0x18, 0x02, 0x7f, 0xff, 0xff, 0xff, 0x0c, 0x1a, 0x0b}, cdMapISt},
	}
	for _, c := range cases {
		plan := []cdRead{{Tag: 1, Kind: c.kind, Req: true}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tr := cdReadOurs(c.in, plan)
		runtime.ReadMemStats(&after)
		if tr.Err == nil {
			t.Errorf("%s: tarscomm accepted % x:\n%s", c.name, c.in, tr)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: tarscomm allocated %d bytes for % x", c.name, got, c.in)
		}
		// Skipping it must be refused too, and cheaply.
		skip := append(append([]byte{}, c.in...), 0x2c)
		runtime.ReadMemStats(&before)
		tr = cdReadOurs(skip, []cdRead{{Tag: 2, Kind: cdInt32, Req: true}})
		runtime.ReadMemStats(&after)
		if tr.Err == nil {
			t.Errorf("%s: tarscomm skipped % x:\n%s", c.name, skip, tr)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: tarscomm allocated %d bytes skipping % x", c.name, got, skip)
		}
	}
}

// TestCodecDiffTagOrder: fields out of order, repeated, absent, and tags of 15 and more in
// long heads (even long heads carrying a short tag, which TarsCpp's head reader accepts).
func TestCodecDiffTagOrder(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		plan []cdRead
	}{
		{"out of order", []byte{0x32, 0, 0, 1, 0, 0x10, 5}, []cdRead{{Tag: 1, Kind: cdInt32}, {Tag: 3, Kind: cdInt32}}},
		{"out of order required", []byte{0x30, 7, 0x10, 5}, []cdRead{{Tag: 1, Kind: cdInt32, Req: true}}},
		{"repeated", []byte{0x10, 5, 0x10, 6, 0x20, 7}, []cdRead{{Tag: 1, Kind: cdInt32}, {Tag: 2, Kind: cdInt32}}},
		{"long head short tag", []byte{0xf0, 0x01, 9, 0xf6, 0x14, 1, 'z'}, []cdRead{{Tag: 1, Kind: cdInt8, Req: true}, {Tag: 20, Kind: cdString, Req: true}}},
		{"tag 15", []byte{0xf0, 0x0f, 9}, []cdRead{{Tag: 14, Kind: cdInt8}, {Tag: 15, Kind: cdInt8, Req: true}}},
		{"tag 255 after unknown", []byte{0x1c, 0xfa, 0x20, 0x0b, 0xf6, 0xff, 1, 'q'}, []cdRead{{Tag: 255, Kind: cdString, Req: true}}},
		{"struct end stops", []byte{0x0b, 0x10, 4}, []cdRead{{Tag: 1, Kind: cdInt8}}},
		{"missing required at end", []byte{0x10, 4}, []cdRead{{Tag: 1, Kind: cdInt8}, {Tag: 2, Kind: cdString, Req: true}}},
		{"missing optional defaults", []byte{0x30, 4}, []cdRead{{Tag: 1, Kind: cdString}, {Tag: 2, Kind: cdBytes}, {Tag: 3, Kind: cdInt8}, {Tag: 4, Kind: cdMapSS}, {Tag: 5, Kind: cdDouble}}},
	}
	for _, c := range cases {
		ours, theirs := cdReadOurs(c.in, c.plan), cdReadTheirs(c.in, c.plan)
		if ours.String() != theirs.String() {
			t.Errorf("%s: % x\ntarscomm:\n%s\nTarsGo:\n%s", c.name, c.in, ours.Detail(), theirs.Detail())
		}
	}
}
