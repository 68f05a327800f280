package gen

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// runGenerated generates Go for the .tars source src (as m.tars) into a package tree that
// exists only in a build overlay, adds testSrc as a test file of the package of module dir
// testDir, and runs go test on it. It returns go test's output and whether it passed.
func runGenerated(t *testing.T, src, testDir, testSrc string) (string, bool) {
	t.Helper()
	g, err := genOverlay(t, "zzrun", [][2]string{{"m.tars", src}})
	if err != nil {
		t.Fatalf("generator refused a legal file: %v", err)
	}
	g.add(t, testDir+"/gen_test.go", "gen_test.go", []byte(testSrc))
	// go test would run the test in the package's directory, which exists only in the overlay:
	// compile the test binary and run it here.
	bin := filepath.Join(g.dir, "pkg.test")
	b, err := exec.Command("go", "test", "-c", "-vet=off", "-overlay", g.overlay(t), "-o", bin, g.prefix+"/"+testDir).CombinedOutput()
	if err != nil {
		return "build: " + string(b), false
	}
	b, err = exec.Command(bin, "-test.count=1").CombinedOutput()
	return string(b), err == nil
}

const wireIDL = `
module Wire {
	enum Color { NEG = -3, ZERO = 0, BIG = 2147483647, LOW = -2147483648 };
	struct Inner { 0 optional int x = 5; 1 optional string s = "d"; };
	struct S {
		0 require unsigned int u32;
		1 require unsigned short u16;
		2 require unsigned byte u8;
		3 optional vector<unsigned byte> ub;
		4 optional vector<byte> b;
		5 optional Color c = NEG;
		6 optional map<int, vector<Inner> > m;
		7 optional vector<map<string, vector<byte> > > vm;
		8 optional map<Color, map<string, Inner> > mm;
		9 optional vector<Color> cs;
		10 optional Inner in1;
		11 optional int a;
		12 optional int A;
		13 optional string type;
		14 optional long len;
		15 optional bool error = true;
		16 optional Color d = 0;
		255 optional long far;
	};
};
`

const wireTest = `package wire

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

func TestWire(t *testing.T) {
	in := NewS()
	in.U32, in.U16, in.U8 = math.MaxUint32, math.MaxUint16, math.MaxUint8
	in.Ub = []uint8{0, 255}
	in.B = []byte{1}
	in.C = Color_LOW
	in.M = map[int32][]Inner{-1: {NewInner(), {X: 0, S: ""}}}
	in.Vm = []map[string][]byte{{"k": {9}}, nil}
	in.Mm = map[Color]map[string]Inner{Color_BIG: {"i": {X: 7, S: "x"}}}
	in.Cs = []Color{Color_NEG, Color_BIG}
	in.In1 = Inner{X: 5, S: "d"}
	in.A, in.A_ = 1, 2
	in.Type, in.Len, in.Error = "t", -1, false
	in.Far = 3

	var e codec.Encoder
	e.WriteInt64(0, math.MaxUint32)
	e.WriteInt32(1, math.MaxUint16)
	e.WriteInt16(2, math.MaxUint8)
	e.WriteListHead(3, 2)
	e.WriteInt16(0, 0)
	e.WriteInt16(0, 255)
	e.WriteBytes(4, []byte{1})
	e.WriteInt32(5, math.MinInt32)
	e.WriteMapHead(6, 1)
	e.WriteInt32(0, -1)
	e.WriteListHead(1, 2)
	e.WriteStructBegin(0)
	e.WriteStructEnd()
	e.WriteStructBegin(0)
	e.WriteInt32(0, 0)
	e.WriteString(1, "")
	e.WriteStructEnd()
	e.WriteListHead(7, 2)
	e.WriteMapHead(0, 1)
	e.WriteString(0, "k")
	e.WriteBytes(1, []byte{9})
	e.WriteMapHead(0, 0)
	e.WriteMapHead(8, 1)
	e.WriteInt32(0, math.MaxInt32)
	e.WriteMapHead(1, 1)
	e.WriteString(0, "i")
	e.WriteStructBegin(1)
	e.WriteInt32(0, 7)
	e.WriteString(1, "x")
	e.WriteStructEnd()
	e.WriteListHead(9, 2)
	e.WriteInt32(0, -3)
	e.WriteInt32(0, math.MaxInt32)
	e.WriteStructBegin(10)
	e.WriteStructEnd()
	e.WriteInt32(11, 1)
	e.WriteInt32(12, 2)
	e.WriteString(13, "t")
	e.WriteInt64(14, -1)
	e.WriteBool(15, false)
	e.WriteInt32(16, 0)
	e.WriteInt64(255, 3)

	got := in.MarshalTars(nil)
	if !bytes.Equal(got, e.Buf) {
		t.Errorf("encoding differs from the hand-written TARS encoding:\n got % x\nwant % x", got, e.Buf)
	}
	var out S
	if err := out.UnmarshalTars(got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		vi, vo := reflect.ValueOf(in), reflect.ValueOf(out)
		for i := range vi.NumField() {
			if !reflect.DeepEqual(vi.Field(i).Interface(), vo.Field(i).Interface()) {
				t.Errorf("round trip: field %s: in %#v, out %#v", vi.Type().Field(i).Name, vi.Field(i).Interface(), vo.Field(i).Interface())
			}
		}
	}
	var out2 S
	if err := out2.UnmarshalTars(e.Buf); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out2) {
		t.Errorf("decode of hand encoding:\n in %+v\nout %+v", in, out2)
	}
}
`

// TestWireRoundTrip runs, against the Go generated for wireIDL, a test that encodes a struct
// holding unsigned integers at their maximums, vector<unsigned byte> and vector<byte>, enums at
// negative and extreme values, nested vectors and maps of structs, enums and bytes, fields named
// like Go keywords and builtins or differing only in case, and tag 255: the encoding must equal
// the one written by hand with codec.Encoder, and decoding either must give the struct back.
func TestWireRoundTrip(t *testing.T) {
	out, ok := runGenerated(t, wireIDL, "wire", wireTest)
	if !ok {
		t.Fatalf("generated code's round trip failed:\n%s", out)
	}
}
