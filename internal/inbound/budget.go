package inbound

import "sync/atomic"

// A Budget bounds the memory that incomplete large frames may hold before their bytes arrive.
// A server shares one among all its connections' Assemblers. An Assembler that starts a large
// frame takes a buffer of the frame's whole length only when the budget can reserve that length
// until the frame is complete or dropped; otherwise it assembles the frame in a buffer that
// grows with the bytes that arrive. A header alone, claiming the maximum packet size, then pins
// a minimum-size buffer instead of the whole length: memory follows what the peer sent.
//
// A Budget is safe for concurrent use; its methods are nil-safe (a nil Budget reserves nothing
// and counts nothing).
type Budget struct {
	limit    int64
	reserved atomic.Int64 // bytes reserved by incomplete frames assembled whole
	grown    atomic.Int64 // frames started in a growing buffer
}

// NewBudget returns a Budget that lets incomplete frames reserve up to limit bytes together.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Limit returns the bytes the budget lets incomplete frames reserve together.
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Reserved returns the bytes incomplete frames reserve now.
func (b *Budget) Reserved() int64 {
	if b == nil {
		return 0
	}
	return b.reserved.Load()
}

// Grown returns how many frames were assembled in a growing buffer because the budget could not
// take their length (counted when each started).
func (b *Budget) Grown() int64 {
	if b == nil {
		return 0
	}
	return b.grown.Load()
}

// take reserves n bytes and reports whether the budget had room for them.
func (b *Budget) take(n int) bool {
	for {
		r := b.reserved.Load()
		if r+int64(n) > b.limit {
			return false
		}
		if b.reserved.CompareAndSwap(r, r+int64(n)) {
			return true
		}
	}
}

// give returns n bytes reserved by take.
func (b *Budget) give(n int) { b.reserved.Add(-int64(n)) }
