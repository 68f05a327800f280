package codec

import (
	"encoding/binary"
	"unsafe"
)

// The strings that generated code decodes (ReadStringKeep), and its short lists of numbers
// (MakeList), do not each get an allocation of their own: a Decoder copies them into a chunk of
// memory, its arena, so that the strings and number lists of one decode share one allocation
// (or a few for a large input). Strings are made over their bytes in the chunk, lists are
// slices of it. This is sound because of these rules:
//
//   - a chunk only ever fills up: every string or list gets a region no other one gets, past
//     the regions already given out, and the Decoder never writes a region once given out. How
//     far a chunk is given out is kept in the chunk itself (its first 2 bytes), not in the
//     Decoder, so that a Decoder restored from a copy made earlier (d2 := *d ... *d = d2)
//     cannot give a region out again; and a chunk is added to only by the Decoder at the
//     address that made it, so that a copy of a Decoder used beside it (even on another
//     goroutine) makes chunks of its own. (A Decoder on a goroutine's stack that the stack's
//     growth moves starts a new chunk too: it costs an allocation, never a string.)
//   - the arena never escapes as a []byte. A list is a slice of numbers whose capacity ends
//     where its region ends, so that its owner can write only its own region (appending past
//     the capacity moves the list elsewhere): no string can change;
//   - a chunk holds no pointers, so the garbage collector need not scan it, and a list's region
//     is aligned for its element type;
//   - its bytes are copies: nothing points into the input, which the caller may reuse as soon
//     as the decode returns.
//
// Reset keeps the arena: a Decoder that decodes again and again (into fresh values) goes on
// filling the chunk it made before, so that a chunk serves several small decodes and most of
// them allocate nothing for their strings. The first chunk of a Decoder is sized from its input
// (no larger than the input left, which no string can outgrow); a later one, made because the
// Decoder filled one, is arenaChunk bytes as far as half the decode's allowance permits. The price is
// that a string or list kept alive keeps its whole chunk alive: at most arenaChunk bytes, which
// may hold the strings of other decodes by the same Decoder.

const (
	// arenaChunk is the most a chunk sets aside at once for strings and lists; a chunk is
	// smaller when the input left (which no string can outgrow) is.
	arenaChunk = 1024
	// arenaMaxString is the largest string or list put in the arena; a larger one gets its
	// own allocation, which costs little next to filling it. It bounds the room a chunk can
	// leave unused, when the next string does not fit, to a quarter of it.
	arenaMaxString = arenaChunk / 4
	// arenaHead is the size of a chunk's head, how many of its bytes are given out (the head
	// included; a chunk is at most arenaHead+arenaChunk bytes). A chunk is at least 16 bytes,
	// so not from the allocator's tiny blocks: it starts 8-aligned, and regions are aligned
	// by their offset in it.
	arenaHead = 2
)

// arenaAlloc returns a region of n bytes of the arena aligned to align (a power of two at most
// 8), zeroed and never given out before, or nil when n is 0 or too large for the arena.
func (d *Decoder) arenaAlloc(n, align int) unsafe.Pointer {
	if n <= 0 || n > arenaMaxString {
		return nil
	}
	self := uintptr(unsafe.Pointer(d))
	used, pad := 0, 0
	if d.arenaAt == self && len(d.arena) >= arenaHead {
		used = int(binary.LittleEndian.Uint16(d.arena))
		pad = -used & (align - 1) // the chunk starts 8-aligned
	}
	if used == 0 || pad+n > len(d.arena)-used {
		// No string read from here on is longer than the input left, so a chunk of that
		// size holds them all unless lists take its room. A Decoder that filled a chunk
		// before (in this decode or an earlier one, see Reset) is likely to fill the next:
		// that one takes up to half the allowance left (the rest is for the lists and maps
		// of the decode), up to arenaChunk.
		size := min(len(d.buf)-d.off+n, arenaChunk)
		if used != 0 {
			size = max(size, min(arenaChunk, d.allowanceLeft()/2-arenaHead))
		}
		size = arenaHead + max(size, n, 16-arenaHead)
		d.charge(size)
		d.arena = make([]byte, size)
		d.arenaAt = self
		used, pad = arenaHead, 0
	}
	start := used + pad
	binary.LittleEndian.PutUint16(d.arena, uint16(start+n))
	return unsafe.Pointer(&d.arena[start])
}

// arenaString returns a string holding a copy of b, made in the arena when b is short. A string
// of one byte or none takes neither arena room nor an allocation (the runtime has them all).
func (d *Decoder) arenaString(b []byte) string {
	if len(b) <= 1 {
		d.charge(len(b))
		return string(b)
	}
	p := d.arenaAlloc(len(b), 1)
	if p == nil {
		d.charge(len(b))
		return string(b)
	}
	dst := unsafe.Slice((*byte)(p), len(b))
	copy(dst, b)
	return unsafe.String(&dst[0], len(dst))
}
