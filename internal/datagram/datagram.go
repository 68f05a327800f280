package datagram

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tarscomm/tarscomm/codec"
)

// MaxSize is the largest frame one datagram carries, header included: 65507 bytes, the largest
// UDP payload over IPv4 (65535 bytes of IP packet, less 20 of IP header and 8 of UDP header). A
// larger frame cannot be sent over IPv4 at all (sendto fails with EMSGSIZE) and would not fit
// the 64 KiB receive buffer of a TarsCpp or gnet peer.
const MaxSize = 65507

// ErrTooLarge reports a frame larger than MaxSize: it cannot travel in one datagram.
var ErrTooLarge = errors.New("larger than one udp datagram carries (65507 bytes)")

// ErrNotOneFrame reports a datagram that is not exactly one frame: shorter than a frame
// header, or whose header's length differs from the datagram's (truncated, or trailing bytes).
var ErrNotOneFrame = errors.New("datagram: not exactly one frame")

// TooLarge returns an error wrapping ErrTooLarge that says what (a request, a reply) and how
// large it was.
func TooLarge(what string, n int) error {
	return fmt.Errorf("%s of %d bytes: %w", what, n, ErrTooLarge)
}

// Check returns nil if d, one received datagram, is exactly one frame of at most MaxSize bytes,
// and otherwise an error wrapping ErrTooLarge or ErrNotOneFrame.
func Check(d []byte) error {
	if len(d) > MaxSize {
		return TooLarge("datagram", len(d))
	}
	if len(d) < codec.HeaderLen {
		return fmt.Errorf("%w: %d bytes, less than a header", ErrNotOneFrame, len(d))
	}
	if l := binary.BigEndian.Uint32(d); uint64(l) != uint64(len(d)) {
		return fmt.Errorf("%w: header says %d bytes, datagram has %d", ErrNotOneFrame, l, len(d))
	}
	return nil
}
