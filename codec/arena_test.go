package codec

import (
	"encoding/binary"
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
		d = Decoder{} // a new Decoder: Reset would go on filling the chunk of the last run
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
	in := arenaInput([]string{"", long, "s", "sh"}, make([]int64, arenaMaxString/8+1))
	var d Decoder
	d.Reset(in)
	gotS, gotN := readArena(t, &d, 4)
	if gotS[0] != "" || gotS[1] != long || gotS[2] != "s" || gotS[3] != "sh" || len(gotN) != arenaMaxString/8+1 {
		t.Fatalf("decoded %q, %d numbers", gotS, len(gotN))
	}
	if len(d.arena) == 0 || len(d.arena) > arenaHead+len(in) {
		t.Fatalf("arena chunk of %d bytes for an input of %d", len(d.arena), len(in))
	}
	// The one-byte string takes no room either: the runtime has every one-byte string.
	if used := binary.LittleEndian.Uint16(d.arena); used != arenaHead+2 {
		t.Fatalf("arena gave out %d bytes; want only the two-byte string's", used-arenaHead)
	}
}

// TestArenaCopiedDecoder: copying a Decoder in the middle of a decode never lets a region be
// given out twice: not when the copy and the original both go on (the copy makes its own
// chunk), not when the Decoder is restored from a copy made earlier and decodes again.
func TestArenaCopiedDecoder(t *testing.T) {
	in := arenaInput([]string{"one", "two", "three"}, nil)
	var d Decoder
	d.Reset(in)
	one, err := d.ReadStringKeep(0, true, "")
	if err != nil {
		t.Fatal(err)
	}
	saved := d
	two, err := d.ReadStringKeep(1, true, "")
	if err != nil {
		t.Fatal(err)
	}
	// The copy reads tag 1 again, and then the original goes on with tag 2.
	copied := saved
	twoAgain, err := copied.ReadStringKeep(1, true, "")
	if err != nil {
		t.Fatal(err)
	}
	three, err := d.ReadStringKeep(2, true, "")
	if err != nil {
		t.Fatal(err)
	}
	// Restored to before tag 1, the Decoder reads it again.
	d = saved
	twoThird, err := d.ReadStringKeep(1, true, "")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{one, two, twoAgain, three, twoThird}
	want := []string{"one", "two", "two", "three", "two"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("strings %q, want %q", got, want)
		}
	}
	// No two of them share bytes.
	for i := range got {
		for j := range i {
			pi, pj := uintptr(unsafe.Pointer(unsafe.StringData(got[i]))), uintptr(unsafe.Pointer(unsafe.StringData(got[j])))
			if pi < pj+uintptr(len(got[j])) && pj < pi+uintptr(len(got[i])) {
				t.Fatalf("%q and %q share memory", got[i], got[j])
			}
		}
	}
}

// TestArenaAcrossReset: a Decoder that is Reset and decodes again goes on filling its chunk, so
// that most small decodes allocate nothing for their strings; the strings of every decode stay
// as they were and no two share bytes; and the chunk stays within arenaChunk bytes.
func TestArenaAcrossReset(t *testing.T) {
	strs := []string{"Hello.World.GreeterObj", "trace-id", "0123456789abcdef"}
	in := arenaInput(strs, []int64{1, 2})
	var d Decoder
	const runs = 200
	if n := testing.AllocsPerRun(runs, func() {
		d.Reset(in)
		readArenaQuiet(t, &d, len(strs))
	}); n > 0.25 {
		t.Fatalf("%v allocations per decode of %d strings and a list by a reused Decoder; want a chunk for several decodes", n, len(strs))
	}
	if len(d.arena) > arenaHead+arenaChunk {
		t.Fatalf("chunk of %d bytes; want at most %d", len(d.arena), arenaHead+arenaChunk)
	}
	var all []string
	var lists [][]int64
	for range 50 {
		d.Reset(in)
		s, l := readArena(t, &d, len(strs))
		all = append(all, s...)
		lists = append(lists, l)
	}
	for i, s := range all {
		if s != strs[i%len(strs)] {
			t.Fatalf("string %d = %q, want %q", i, s, strs[i%len(strs)])
		}
	}
	for _, l := range lists {
		if len(l) != 2 || l[0] != 1 || l[1] != 2 {
			t.Fatalf("list = %v, want [1 2]", l)
		}
	}
	for i := range all {
		for j := range i {
			pi, pj := uintptr(unsafe.Pointer(unsafe.StringData(all[i]))), uintptr(unsafe.Pointer(unsafe.StringData(all[j])))
			if pi < pj+uintptr(len(all[j])) && pj < pi+uintptr(len(all[i])) {
				t.Fatalf("strings %d and %d share memory", i, j)
			}
		}
	}
}

// readArenaQuiet is readArena without returning what it read (it allocates nothing itself).
func readArenaQuiet(t testing.TB, d *Decoder, nstr int) {
	for i := range nstr {
		if _, err := d.ReadStringKeep(byte(i), true, ""); err != nil {
			t.Fatal(err)
		}
	}
	n, _, err := d.ReadListHead(byte(nstr), true)
	if err != nil {
		t.Fatal(err)
	}
	_ = MakeList[int64](d, n)
}
