package all_test

import (
	"encoding/binary"
	"reflect"
	"runtime"
	"testing"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/all"
	"github.com/tarscomm/tarscomm/codec"
)

// zeroPoint is a Demo::Base::Point with its required fields zero, 4 bytes on the wire and
// 24 in Go.
var zeroPoint = []byte{0<<4 | codec.TypeStructBegin, 0<<4 | codec.TypeZero, 1<<4 | codec.TypeZero, codec.TypeStructEnd}

// sizeInt32 appends a container size at tag 0 as a 4-byte int.
func sizeInt32(h *hostile, n int) *hostile {
	return h.raw(0<<4 | codec.TypeInt32).raw(binary.BigEndian.AppendUint32(nil, uint32(n))...)
}

// checkItemAlloc decodes input into a fresh Item and fails the test when it allocated
// more than allocBound for the value the decode left (what checkGeneratedAlloc, and so
// FuzzDecodeItem, checks), three times in a row. It returns the decode's error.
func checkItemAlloc(t *testing.T, input []byte) error {
	t.Helper()
	var alloc, bound uint64
	var err error
	for range 3 {
		var it all.Item
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err = it.UnmarshalTars(input)
		runtime.ReadMemStats(&after)
		alloc = after.TotalAlloc - before.TotalAlloc
		bound = allocBound(len(input), goWeight(reflect.ValueOf(&it).Elem()))
		if alloc <= bound {
			return err
		}
	}
	t.Errorf("decoding %d bytes (error: %v) allocated %d bytes (%.1f per byte), bound %d (%.1f per byte)",
		len(input), err, alloc, float64(alloc)/float64(len(input)), bound, float64(bound)/float64(len(input)))
	return err
}

// TestFailedMapValueAllocationBounded: a map<string, vector<Point>> (Item.groups) whose one
// entry's vector claims one Point more than it holds stays within allocBound (8 bytes per input
// byte plus 5 times the Go form of the partial value, what FuzzDecodeItem checks). The map's
// count takes the whole allowance (MakeMap), so the entry's vector grows by append; the
// generated decoder used to decode it into a temporary that the error dropped, so none of it
// was in the partial value: about 40 bytes per input byte. A value whose decode fails is now
// kept in the map with what it holds.
func TestFailedMapValueAllocationBounded(t *testing.T) {
	const k = 100000 // Points held; the vector claims k+1
	h := itemPrefix(0)
	sizeInt32(h.head(18, codec.TypeMap), 2*k) // claims 2k entries: the whole allowance
	h.raw(0<<4|codec.TypeString1, 0)          // key ""
	sizeInt32(h.head(1, codec.TypeList), k+1)
	for range k {
		h.raw(zeroPoint...)
	}
	if err := checkItemAlloc(t, h.b); err == nil {
		t.Errorf("decode succeeded; want an error for the missing Point")
	}
}

// TestRepeatedMapKeyAllocationBounded: a valid Item whose map<string, vector<Point>> repeats
// one key stays within allocBound. 10000 entries of an empty vector take the allowance, then
// each of 100 entries of 200 Points under the same key used to be decoded into a fresh vector
// (grown by append) that the next one replaced: about 19.5 bytes per input byte against 8.3
// allowed. A repeated key's value is now decoded into the value it replaces, reusing its memory
// (the last value still wins, as in TarsGo; TarsCpp keeps the first).
func TestRepeatedMapKeyAllocationBounded(t *testing.T) {
	const empties, full, points = 10000, 100, 200
	h := itemPrefix(0)
	sizeInt32(h.head(18, codec.TypeMap), empties+full)
	for range empties {
		h.raw(0<<4|codec.TypeString1, 0, 1<<4|codec.TypeList, 0<<4|codec.TypeZero) // "" -> []
	}
	for range full {
		h.raw(0<<4|codec.TypeString1, 0) // "" again
		sizeInt32(h.head(1, codec.TypeList), points)
		for range points {
			h.raw(zeroPoint...)
		}
	}
	if err := checkItemAlloc(t, h.b); err != nil {
		t.Fatalf("decode: %v; want a valid Item", err)
	}
}
