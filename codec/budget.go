package codec

import "unsafe"

// A decode's memory is bounded by its input. A count read from the input (a list's or a map's
// size) is checked against the bytes left, but a count alone must not decide how much memory
// is set aside before the elements it announces are read: a 10 MiB input can claim ten million
// elements of a 64-byte struct, and every level of a nested container can claim as much again.
// So the capacity a Decoder gives out ahead of reading, over a whole decode and summed over
// every nesting level, comes from one allowance of allowancePerByte bytes per input byte, which
// the strings and byte slices it copies draw on too. A container whose count asks for more than
// is left starts smaller and grows as its elements are actually read, so honest input of any
// size decodes as before, and hostile input gets memory only for what it really contains.

// allowancePerByte is how many bytes of memory a Decoder sets aside, per byte of its input,
// for the capacity of lists and maps sized from counts in the input and for the strings and
// byte slices it copies. It is below 8 so that what the allocator rounds up (size classes, a
// map's tables) still keeps a decode under 8 bytes allocated per input byte.
const allowancePerByte = 7

// reserve returns how many of n elements of size bytes each may be set aside now (n itself
// while the allowance lasts, then fewer, down to 0), and takes them from the allowance.
func (d *Decoder) reserve(n, size int) int {
	if n <= 0 || size <= 0 {
		return max(n, 0)
	}
	left := d.allowanceLeft()
	if n > left/size {
		n = max(left/size, 0)
	}
	d.reserved += n * size
	return n
}

// allowanceLeft returns how many bytes of the allowance are left.
func (d *Decoder) allowanceLeft() int { return allowancePerByte*len(d.buf) - d.reserved }

// charge takes n bytes the Decoder copies out of its input (a string, a byte slice) from the
// allowance.
func (d *Decoder) charge(n int) { d.reserved += n }

// MakeList returns the slice that n list elements, n as ReadListHead returned it, are decoded
// into: empty, with room for n elements, or for fewer when n elements of T would take more
// memory than the input justifies (see the allowance above); append the elements past its
// capacity as they are read. Code generated from .tars files uses it. A short list of bool,
// int8, int16, int32, int64, float32 or float64 shares its memory with the strings of the decode
// (see ReadStringKeep): its capacity is exact, so that appending past it moves it elsewhere.
func MakeList[T any](d *Decoder, n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	n = d.reserve(n, size)
	switch any((*T)(nil)).(type) {
	case *bool, *int8, *int16, *int32, *int64, *float32, *float64:
		// Numbers hold no pointers: a short list of them is carved out of the arena, whose
		// chunk was charged to the allowance whole, so the list is not charged again.
		if p := d.arenaAlloc(n*size, size); p != nil {
			d.reserved -= n * size
			return unsafe.Slice((*T)(p), n)[:0:n]
		}
	}
	return make([]T, 0, n)
}

// MakeMap returns the map that n entries, n as ReadMapHead returned it, are decoded into: nil
// when n is 0, else a map sized for n entries or, when that would take more memory than the
// input justifies, for fewer (it grows as entries are added). Code generated from .tars files
// uses it.
func MakeMap[K comparable, V any](d *Decoder, n int) map[K]V {
	if n <= 0 {
		return nil
	}
	var k K
	var v V
	return make(map[K]V, d.reserve(n, mapEntryCost(int(unsafe.Sizeof(k)), int(unsafe.Sizeof(v)))))
}

// mapEntryCost is what a Go map sized for one more entry costs, for keys and values of those
// sizes: a slot (key, value and a control byte) at a load of 7/8, in a table whose size is
// rounded up to a power of two (up to twice as much).
func mapEntryCost(keySize, valueSize int) int {
	return (keySize + valueSize + 1) * 16 / 7
}
