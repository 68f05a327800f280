package codec

import (
	"strings"
	"testing"
	"unsafe"
)

// arenaInput encodes strings at tags 0.. and then a list of int64 at the next tag.
func arenaInput(strs []string, nums []int64) []byte {
	var e Encoder
	for i, s := range strs {
		e.WriteString(byte(i), s)
	}
	e.WriteListHead(byte(len(strs)), len(nums))
	for _, v := range nums {
		e.WriteInt64(0, v)
	}
	return e.Buf
}

// readArena decodes arenaInput's fields as generated code does.
func readArena(t testing.TB, d *Decoder, nstr int) ([]string, []int64) {
	strs := make([]string, nstr)
	for i := range strs {
		s, err := d.ReadStringKeep(byte(i), true, "")
		if err != nil {
			t.Fatal(err)
		}
		strs[i] = s
	}
	n, ok, err := d.ReadListHead(byte(nstr), true)
	if err != nil || !ok {
		t.Fatalf("ReadListHead = %d, %v, %v", n, ok, err)
	}
	nums := MakeList[int64](d, n)
	for range n {
		v, err := d.ReadInt64(0, true)
		if err != nil {
			t.Fatal(err)
		}
		nums = append(nums, v)
	}
	return strs, nums
}

// TestArenaSharesOneAllocation: the strings and the number list of a decode take one
// allocation together, the list is aligned for its elements, and what was decoded is right.
func TestArenaSharesOneAllocation(t *testing.T) {
	strs := []string{"a", "Hello.World.GreeterObj", strings.Repeat("d", 64), "xyz"}
	// Numbers that take 9 bytes on the wire: the chunk, sized from the input left when the
	// first string is read, then has room for the list too.
	nums := []int64{1 << 40, -1 << 41, 1 << 42}
	in := arenaInput(strs, nums)
	var d Decoder
	if n := testing.AllocsPerRun(100, func() {
		d.Reset(in)
		for i := range strs {
			if _, err := d.ReadStringKeep(byte(i), true, ""); err != nil {
				t.Fatal(err)
			}
		}
		n, _, _ := d.ReadListHead(byte(len(strs)), true)
		_ = MakeList[int64](&d, n)
	}); n != 1 {
		t.Fatalf("%v allocations for %d strings and a list; want 1", n, len(strs))
	}
	d.Reset(in)
	gotS, gotN := readArena(t, &d, len(strs))
	for i := range strs {
		if gotS[i] != strs[i] {
			t.Fatalf("string %d = %q, want %q", i, gotS[i], strs[i])
		}
	}
	if len(gotN) != len(nums) || cap(gotN) != len(nums) || gotN[0] != nums[0] || gotN[1] != nums[1] || gotN[2] != nums[2] {
		t.Fatalf("list = %v (cap %d), want %v with the capacity of its length", gotN, cap(gotN), nums)
	}
	if p := uintptr(unsafe.Pointer(&gotN[0])); p%8 != 0 {
		t.Fatalf("[]int64 at %#x: not 8-aligned", p)
	}
	// The list is in the same chunk as the strings (one allocation), past them.
	last := unsafe.StringData(gotS[len(gotS)-1])
	if d := uintptr(unsafe.Pointer(&gotN[0])) - uintptr(unsafe.Pointer(last)); d >= 16 {
		t.Fatalf("the list starts %d bytes past the last string: not in the same chunk", d)
	}
}

// TestArenaNeverChanges: decoded strings stay as they were whatever happens next: the input is
// overwritten (they are copies), the Decoder decodes more into the same chunk, and the owner of
// a list from the same chunk writes every element it can reach and appends past it.
func TestArenaNeverChanges(t *testing.T) {
	strs := []string{"alpha", "beta"}
	in := arenaInput(strs, []int64{7, 8})
	var d Decoder
	d.Reset(in)
	gotS, gotN := readArena(t, &d, len(strs))
	for i := range in {
		in[i] = 0xff
	}
	full := gotN[:cap(gotN)]
	for i := range full {
		full[i] = -1
	}
	gotN = append(gotN, -1, -1, -1)
	_ = gotN
	// More strings from a second input, into the same chunk if there is room.
	in2 := arenaInput([]string{"gamma", "delta"}, nil)
	d2 := d
	d2.buf, d2.off = in2, 0
	more, _ := readArena(t, &d2, 2)
	if gotS[0] != "alpha" || gotS[1] != "beta" || more[0] != "gamma" || more[1] != "delta" {
		t.Fatalf("strings changed: %q %q %q %q", gotS[0], gotS[1], more[0], more[1])
	}
}

// TestArenaLargeAndEmpty: a string longer than arenaMaxString gets its own allocation, an empty
// one none, and a long list of numbers is not put in the arena.
func TestArenaLargeAndEmpty(t *testing.T) {
	long := strings.Repeat("L", arenaMaxString+1)
	in := arenaInput([]string{"", long, "s"}, make([]int64, arenaMaxString/8+1))
	var d Decoder
	d.Reset(in)
	gotS, gotN := readArena(t, &d, 3)
	if gotS[0] != "" || gotS[1] != long || gotS[2] != "s" || len(gotN) != arenaMaxString/8+1 {
		t.Fatalf("decoded %q, %d numbers", gotS, len(gotN))
	}
	if cap(d.arena) == 0 || cap(d.arena) > len(in) {
		t.Fatalf("arena chunk of %d bytes for an input of %d", cap(d.arena), len(in))
	}
	if len(d.arena) != 1 {
		t.Fatalf("arena holds %d bytes; want only the short string", len(d.arena))
	}
}
