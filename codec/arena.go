package codec

import "unsafe"

// The strings that generated code decodes (ReadStringKeep), and its short lists of numbers
// (MakeList), do not each get an allocation of their own: a Decoder copies them into a chunk of
// memory, its arena, so that the strings and number lists of one decode share one allocation
// (or a few for a large input). Strings are made over their bytes in the chunk, lists are
// slices of it. This is sound because of these rules:
//
//   - the arena only ever grows: every string or list gets a region of the chunk no other one
//     gets, past the regions already given out (a chunk without room is abandoned for a new
//     one, never reallocated or reused), and the Decoder never writes a region once given out;
//   - the arena never escapes as a []byte. A list is a slice of numbers whose capacity ends
//     where its region ends, so that its owner can write only its own region (appending past
//     the capacity moves the list elsewhere): no string can change;
//   - a chunk holds no pointers, so the garbage collector need not scan it, and a list's region
//     is aligned for its element type;
//   - its bytes are copies: nothing points into the input, which the caller may reuse as soon
//     as the decode returns.
//
// Reset drops the arena, so a chunk serves one decode. The price is that a string or list kept
// alive keeps its whole chunk alive: at most arenaChunk bytes, or the input's size if smaller.

const (
	// arenaChunk is the most a chunk sets aside at once; a chunk is smaller when the input
	// left (which no string can outgrow) is.
	arenaChunk = 1024
	// arenaMaxString is the largest string or list put in the arena; a larger one gets its
	// own allocation, which costs little next to filling it. It bounds the room a chunk can
	// leave unused, when the next string does not fit, to a quarter of it.
	arenaMaxString = arenaChunk / 4
)

// arenaAlloc returns a region of n bytes of the arena aligned to align (a power of two at most
// 8), zeroed and never given out before, or nil when n is 0 or too large for the arena.
func (d *Decoder) arenaAlloc(n, align int) unsafe.Pointer {
	if n <= 0 || n > arenaMaxString {
		return nil
	}
	// Bytes to skip so that the region starts aligned.
	end := uintptr(unsafe.Pointer(unsafe.SliceData(d.arena))) + uintptr(len(d.arena))
	pad := int(-end & uintptr(align-1))
	if pad+n > cap(d.arena)-len(d.arena) {
		// No string read from here on is longer than the input left, so this chunk holds
		// them all unless lists take its room. A fresh chunk is 8-aligned (it is at least
		// 16 bytes, so not from the tiny allocator).
		size := max(min(len(d.buf)-d.off+n, arenaChunk), n, 16)
		d.charge(size)
		d.arena = make([]byte, 0, size)
		pad = 0
	}
	start := len(d.arena) + pad
	d.arena = d.arena[:start+n]
	return unsafe.Pointer(&d.arena[start])
}

// arenaString returns a string holding a copy of b, made in the arena when b is short.
func (d *Decoder) arenaString(b []byte) string {
	p := d.arenaAlloc(len(b), 1)
	if p == nil {
		if len(b) == 0 {
			return ""
		}
		d.charge(len(b))
		return string(b)
	}
	dst := unsafe.Slice((*byte)(p), len(b))
	copy(dst, b)
	return unsafe.String(&dst[0], len(dst))
}
