package codec

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// shortStringMapBody returns the body of a packet (no frame header) whose fields 1 to
// lastTag-1 are minimal valid values (the field at bytesTag is an empty simple list), followed
// by a map<string,string> at mapTag that claims n+1 entries and holds only n, each a distinct
// 2-byte key with an empty value (6 bytes on the wire). The input claims one entry it does not
// hold, so the decode must fail.
func shortStringMapBody(bytesTag, mapTag byte, n int) []byte {
	var b []byte
	for tag := byte(1); tag < mapTag; tag++ {
		switch {
		case tag == bytesTag:
			b = append(b, tag<<4|TypeSimpleList, 0x00, TypeZero)
		case tag == 5 && bytesTag == 7: // RequestPacket: servant and function names
			b = append(b, tag<<4|TypeString1, 0)
		case tag == 6 && bytesTag == 7:
			b = append(b, tag<<4|TypeString1, 0)
		default:
			b = append(b, tag<<4|TypeZero)
		}
	}
	b = append(b, mapTag<<4|TypeMap, 0<<4|TypeInt32)
	b = binary.BigEndian.AppendUint32(b, uint32(n+1))
	for i := range n {
		b = append(b, 0<<4|TypeString1, 2, byte(i>>8), byte(i), 1<<4|TypeString1, 0)
	}
	return b
}

// TestFailedStringMapAllocationBounded: a packet whose string map claims one entry more than it
// holds stays within the bound codec/doc.go states (8 bytes per input byte plus the weight of
// what the packet holds, as FuzzDecodeRequest and FuzzDecodeResponse check). The map grows past
// its allowance-sized start as real entries are read; ReadStringMap used to drop it on the
// missing entry (returning nil), so that memory was in no bound: about 21 bytes per input byte,
// ~210 MiB for one 10 MiB frame from either peer. It now returns the entries read with the error.
func TestFailedStringMapAllocationBounded(t *testing.T) {
	const n = 60000 // 360 KB of input
	cases := []struct {
		name   string
		body   []byte
		decode func([]byte) (weight uint64, err error)
	}{
		{"ResponsePacket.Status", shortStringMapBody(6, 7, n), func(b []byte) (uint64, error) {
			var p ResponsePacket
			err := p.Decode(NewDecoder(b))
			return mapsWeight(p.Context, p.Status), err
		}},
		{"RequestPacket.Context", shortStringMapBody(7, 9, n), func(b []byte) (uint64, error) {
			var p RequestPacket
			err := p.Decode(NewDecoder(b))
			return mapsWeight(p.Context, p.Status), err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var alloc, bound uint64
			var err error
			for range 3 { // as checkAllocBound: over the bound three times to fail
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				var weight uint64
				weight, err = c.decode(c.body)
				runtime.ReadMemStats(&after)
				alloc = after.TotalAlloc - before.TotalAlloc
				bound = 8*uint64(len(c.body)) + 1024 + weight
				if alloc <= bound {
					break
				}
			}
			if err == nil {
				t.Fatalf("decode succeeded; want an error for the missing entry")
			}
			if alloc > bound {
				t.Errorf("decoding %d bytes (error %v) allocated %d bytes (%.1f per byte), bound %d (%.1f per byte)",
					len(c.body), err, alloc, float64(alloc)/float64(len(c.body)), bound, float64(bound)/float64(len(c.body)))
			}
		})
	}
}
