package all_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/all"
	"github.com/tarscomm/tarscomm/codec"
)

// maxAllocPerByte is the decoders' contract: whatever the input, decoding it allocates at
// most this many bytes per input byte beyond the Go size of the elements the input really
// holds (issue 16, item 7).
const maxAllocPerByte = 8

// allocPerByte returns the bytes that decode allocates per byte of input (the mean of a few
// runs after a first one) and decode's error.
func allocPerByte(input []byte, decode func([]byte) error) (float64, error) {
	err := decode(input)
	const runs = 4
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		decode(input)
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / runs / float64(len(input)), err
}

// hostile builds an input of a given total size whose container sizes claim as many elements
// as the bytes left can hold, as a crafted input would: the sizes pass every check against
// the input's length, but the elements are not there.
type hostile struct {
	b     []byte
	total int
}

// itemPrefix starts an Item with its required fields, tags 0 to 10, all zero.
func itemPrefix(total int) *hostile {
	h := &hostile{total: total}
	for tag := range byte(11) {
		if tag == 7 {
			h.b = append(h.b, 7<<4|codec.TypeString1, 0)
			continue
		}
		h.b = append(h.b, tag<<4|codec.TypeZero)
	}
	return h
}

// head appends the head of field tag, of type typ.
func (h *hostile) head(tag, typ byte) *hostile {
	if tag < 15 {
		h.b = append(h.b, tag<<4|typ)
	} else {
		h.b = append(h.b, 0xf0|typ, tag)
	}
	return h
}

// raw appends bytes.
func (h *hostile) raw(b ...byte) *hostile {
	h.b = append(h.b, b...)
	return h
}

// size appends a container size, as a 4-byte int at tag 0, claiming the bytes left after it
// divided by per (the fewest bytes an element can take: 1 for a list, 2 for a map).
func (h *hostile) size(per int) *hostile {
	n := (h.total - len(h.b) - 5) / per
	h.b = binary.BigEndian.AppendUint32(append(h.b, 0<<4|codec.TypeInt32), uint32(n))
	return h
}

// fill pads the input to its total size with c, a byte that stops the decode at once when read
// as an element's head (its tag is not the one expected).
func (h *hostile) fill(c byte) []byte {
	for len(h.b) < h.total {
		h.b = append(h.b, c)
	}
	return h.b
}

func decodeItem(b []byte) error {
	var it all.Item
	return it.UnmarshalTars(b)
}

func decodeTree(b []byte) error {
	var tr all.Tree
	return tr.UnmarshalTars(b)
}

// hostileCases are crafted inputs for every container kind of all.tars: vector of a scalar,
// of strings, of bytes written as a list, of vectors, of structs (nested through a struct);
// maps of strings, of structs, with struct keys, of vectors of structs; and the nesting of
// such claims, each level claiming all the bytes left again.
var hostileCases = []struct {
	name   string
	build  func(total int) []byte
	decode func([]byte) error
}{
	{"vector<byte> as a list", func(n int) []byte { return itemPrefix(n).head(11, codec.TypeList).size(1).fill(0x1c) }, decodeItem},
	{"vector<unsigned byte>", func(n int) []byte { return itemPrefix(n).head(12, codec.TypeList).size(1).fill(0x1c) }, decodeItem},
	{"vector<int>", func(n int) []byte { return itemPrefix(n).head(13, codec.TypeList).size(1).fill(0x1c) }, decodeItem},
	{"vector<string>", func(n int) []byte { return itemPrefix(n).head(14, codec.TypeList).size(1).fill(0x1c) }, decodeItem},
	{"map<string,string>", func(n int) []byte { return itemPrefix(n).head(15, codec.TypeMap).size(2).fill(0x2c) }, decodeItem},
	{"map<int,Point>", func(n int) []byte { return itemPrefix(n).head(16, codec.TypeMap).size(2).fill(0x2c) }, decodeItem},
	{"vector<vector<long>>", func(n int) []byte {
		return itemPrefix(n).head(17, codec.TypeList).size(1).head(0, codec.TypeList).size(1).fill(0x1c)
	}, decodeItem},
	{"map<string,vector<Point>>", func(n int) []byte {
		return itemPrefix(n).head(18, codec.TypeMap).size(2).raw(0<<4|codec.TypeString1, 0).
			head(1, codec.TypeList).size(1).fill(0x1c)
	}, decodeItem},
	{"map<Point,string>", func(n int) []byte { return itemPrefix(n).head(40, codec.TypeMap).size(2).fill(0x2c) }, decodeItem},
	{"vector<Tree> nested 200 deep", func(n int) []byte {
		h := &hostile{total: n}
		for range 200 {
			if len(h.b)+8 > n {
				break
			}
			h.head(1, codec.TypeList).size(1).head(0, codec.TypeStructBegin)
		}
		return h.fill(0x1c)
	}, decodeTree},
	{"map<string,Empty> in vector<Tree>", func(n int) []byte {
		return (&hostile{total: n}).head(1, codec.TypeList).size(1).head(0, codec.TypeStructBegin).
			head(2, codec.TypeMap).size(2).fill(0x2c)
	}, decodeTree},
}

// TestHostileInputAllocation decodes crafted inputs of 64 KiB and 4 MiB (the server's default
// maximum packet is 10 MiB; at 1 KiB the errors themselves, wrapped once per nesting level,
// weigh more than the containers) whose sizes claim what the input cannot hold: each must fail, and
// allocate at most maxAllocPerByte bytes per input byte. Before the generated decoders sized
// their slices and maps from codec.MakeList and MakeMap, a 1 KiB input claiming a
// vector<vector<long>> allocated 16 bytes per byte, a map<string,vector<Point>> 26, and a
// chain of vector<Tree> thousands.
func TestHostileInputAllocation(t *testing.T) {
	for _, c := range hostileCases {
		for _, size := range []int{64 << 10, 4 << 20} {
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) {
				input := c.build(size)
				if len(input) != size {
					t.Fatalf("built %d bytes, want %d", len(input), size)
				}
				perByte, err := allocPerByte(input, c.decode)
				if !errors.Is(err, codec.ErrMalformed) && !errors.Is(err, codec.ErrRequired) {
					t.Fatalf("decode: %v, want an error for an input missing its elements", err)
				}
				if perByte > maxAllocPerByte {
					t.Errorf("%.1f bytes allocated per input byte, want at most %d", perByte, maxAllocPerByte)
				}
				t.Logf("%.2f bytes allocated per input byte", perByte)
			})
		}
	}
}

// TestHonestInputAllocation decodes valid inputs whose elements take a few bytes each and
// little memory: they decode whole, sized once, within the same bound.
func TestHonestInputAllocation(t *testing.T) {
	const n = 20000
	items := map[string]all.Item{
		"vector<int>":    {Ints: make([]int32, n)},
		"vector<string>": {Strs: strings.Split(strings.Repeat("abcdefgh,", n), ",")},
		"vector<vector<long>>": {Matrix: func() [][]int64 {
			m := make([][]int64, n/10)
			for i := range m {
				m[i] = []int64{1, 2, 3, 4, 5, 6, 7, 8}
			}
			return m
		}()},
		"vector<byte>": {Raw: make([]byte, n)},
	}
	for name, it := range items {
		t.Run(name, func(t *testing.T) {
			input := it.MarshalTars(nil)
			perByte, err := allocPerByte(input, decodeItem)
			if err != nil {
				t.Fatal(err)
			}
			if perByte > maxAllocPerByte {
				t.Errorf("%.1f bytes allocated per input byte, want at most %d", perByte, maxAllocPerByte)
			}
			t.Logf("%.2f bytes allocated per input byte", perByte)
		})
	}
}

// TestStructDepthLimit checks that a self-nesting struct cannot be nested deeper than the
// Decoder allows: a chain of a few bytes per level would otherwise drive the recursive
// generated decoder into an unbounded stack (10 MiB of input: 2.6 million levels).
func TestStructDepthLimit(t *testing.T) {
	var h hostile
	for range 1000 {
		h.raw(1<<4|codec.TypeList, 0<<4|codec.TypeInt8, 1, 0<<4|codec.TypeStructBegin)
	}
	for range 1000 {
		h.raw(0<<4 | codec.TypeStructEnd)
	}
	var tr all.Tree
	err := tr.UnmarshalTars(h.b)
	if !errors.Is(err, codec.ErrMalformed) || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("decoding 1000 nested trees: %v, want an error about the depth", err)
	}
	// 200 levels are fine.
	h.b = nil
	for range 200 {
		h.raw(1<<4|codec.TypeList, 0<<4|codec.TypeInt8, 1, 0<<4|codec.TypeStructBegin)
	}
	for range 200 {
		h.raw(0<<4 | codec.TypeStructEnd)
	}
	if err := tr.UnmarshalTars(h.b); err != nil {
		t.Fatalf("decoding 200 nested trees: %v", err)
	}
	depth := 0
	for n := &tr; len(n.Children) == 1; n = &n.Children[0] {
		depth++
	}
	if depth != 200 {
		t.Fatalf("decoded %d levels, want 200", depth)
	}
}

// TestHeavyValidInputAllocation decodes valid inputs whose Go form outweighs their wire form
// (an empty Tree is 2 bytes on the wire and 48 in Go; a map<string,Empty> entry of a 4-byte
// key is 8 bytes on the wire and weighs 42 in Go, its slot at the map's load and rounding and
// the key's bytes): no bound on input bytes alone holds for them, and they are held to
// allocBound, what the decoded value weighs grown by append and map growth on top of
// maxAllocPerByte per input byte. Measured: 107 bytes per input byte for the trees (4.5 times
// their Go form, grown by a quarter at a time past the Decoder's allowance), 4.9 for the map.
func TestHeavyValidInputAllocation(t *testing.T) {
	const n = 100000
	marks := make(map[string]all.Empty, n)
	for i := range n {
		marks[fmt.Sprintf("%03x", i%4096)+string(rune('a'+i/4096))] = all.Empty{}
	}
	trees := map[string]all.Tree{
		"vector<Tree> of empty trees": {Children: make([]all.Tree, n)},
		"map<string,Empty>":           {Marks: marks},
	}
	for name, tr := range trees {
		t.Run(name, func(t *testing.T) {
			input := tr.MarshalTars(nil)
			var got all.Tree
			perByte, err := allocPerByte(input, func(b []byte) error { got = all.Tree{}; return got.UnmarshalTars(b) })
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Children) != len(tr.Children) || len(got.Marks) != len(tr.Marks) {
				t.Fatalf("decoded %d children and %d marks, want %d and %d", len(got.Children), len(got.Marks), len(tr.Children), len(tr.Marks))
			}
			weight := goWeight(reflect.ValueOf(got))
			bound := float64(allocBound(len(input), weight)) / float64(len(input))
			if perByte > bound {
				t.Errorf("%.1f bytes allocated per input byte, want at most %.1f", perByte, bound)
			}
			t.Logf("%d input bytes, Go form %d bytes: %.2f bytes allocated per input byte (bound %.1f)", len(input), weight, perByte, bound)
		})
	}
}
