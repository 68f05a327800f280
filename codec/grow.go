package codec

import (
	"slices"

	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// growRoom is the headroom grow leaves in a large buffer beyond what was asked, for the packet
// fields that follow the body (tags 8 to 10: timeout, context and status maps), so that they do
// not make the buffer grow a second time.
const growRoom = 512

// grow returns b with room for n more bytes. A buffer that becomes large (bufpool.MinSize or
// more) comes from bufpool, so that a frame of several megabytes costs no allocation once its
// size has been seen: whoever owns the frame last gives it back with bufpool.Put.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	need := len(b) + n
	if need < bufpool.MinSize {
		return slices.Grow(b, n)
	}
	nb := bufpool.Get(need + growRoom)[:len(b)]
	copy(nb, b)
	return nb
}
