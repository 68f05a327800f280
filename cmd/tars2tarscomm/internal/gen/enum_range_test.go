package gen

import "testing"

// An enum of bit flags whose top flag is 0x80000000 (or an ALL = 0xFFFFFFFF mask) is legal for
// tars2cpp (a C++ enum; the value is written as (tars::Int32)e) and for TarsGo's tars2go (which
// keeps int32(value): Flag_TOP Flag = -2147483648, Flag_ALL Flag = -1). An enum is an int32 on
// the wire, so both send 02 80 00 00 00 for TOP and 00 ff for ALL at tag 0.
//
// Before, tars2tarscomm's parser refused the file (a review of the generator): "enum Flag:
// value 2147483648 of TOP does not fit an int". It takes the value modulo 2^32 as an int32, as the
// wire does and tars2go does. A default written unsigned (g = 0xFFFFFFFF) is the enumerator ALL;
// the generated code writes g at its default too (10 ff at tag 1), as it writes every field.
const enumRangeIDL = `
module Flags {
	enum Flag { NONE = 0, F1 = 0x1, TOP = 0x80000000, ALL = 0xFFFFFFFF };
	struct S { 0 require Flag f; 1 optional Flag g = 0xFFFFFFFF; };
};
`

const enumRangeTest = `package flags

import (
	"bytes"
	"testing"
)

func TestFlagWire(t *testing.T) {
	if Flag_TOP != -2147483648 || Flag_ALL != -1 {
		t.Fatalf("TOP = %d, ALL = %d; tars2go has -2147483648 and -1", Flag_TOP, Flag_ALL)
	}
	if g := NewS().G; g != Flag_ALL {
		t.Fatalf("default written 0xFFFFFFFF is %d, want Flag_ALL (-1)", g)
	}
	for _, c := range []struct {
		f    Flag
		want []byte
	}{{Flag_TOP, []byte{0x02, 0x80, 0, 0, 0, 0x10, 0xff}}, {Flag_ALL, []byte{0x00, 0xff, 0x10, 0xff}}} {
		s := NewS()
		s.F = c.f
		if got := s.MarshalTars(nil); !bytes.Equal(got, c.want) {
			t.Errorf("%v: % x, want % x", c.f, got, c.want)
		}
	}
}
`

func TestEnumValueAboveInt32(t *testing.T) {
	out, ok := runGenerated(t, enumRangeIDL, "flags", enumRangeTest)
	if !ok {
		t.Fatalf("generated code's test failed:\n%s", out)
	}
}
