package all_test

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/all"
)

// tarsStruct is what tars2tarscomm generates for every struct, as the fuzz targets use it.
type tarsStruct[T any] interface {
	*T
	UnmarshalTars([]byte) error
	MarshalTars([]byte) []byte
}

// FuzzDecodeItem decodes arbitrary bytes into a generated Item (every scalar type, vectors of
// scalars, strings and vectors, maps of strings, of structs, of vectors of structs, with
// struct keys): see fuzzGenerated for what it checks.
func FuzzDecodeItem(f *testing.F) {
	full := fullItem()
	f.Add(full.MarshalTars(nil))
	var reset all.Item
	reset.Reset()
	f.Add(reset.MarshalTars(nil))
	for _, c := range hostileCases {
		if c.name != "vector<Tree> nested 200 deep" && c.name != "map<string,Empty> in vector<Tree>" {
			f.Add(c.build(256))
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) { fuzzGenerated[all.Item](t, input) })
}

// FuzzDecodeTree is FuzzDecodeItem for Tree, a struct that nests itself through a vector and
// holds a map of empty structs: the inputs whose Go form weighs most per input byte.
func FuzzDecodeTree(f *testing.F) {
	tree := all.Tree{Name: "root", Children: []all.Tree{{Name: "a"}, {Children: []all.Tree{{}, {}}}},
		Marks: map[string]all.Empty{"x": {}, "": {}}}
	f.Add(tree.MarshalTars(nil))
	for _, c := range hostileCases {
		if c.name == "vector<Tree> nested 200 deep" || c.name == "map<string,Empty> in vector<Tree>" {
			f.Add(c.build(256))
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) { fuzzGenerated[all.Tree](t, input) })
}

// fuzzGenerated decodes input into a fresh T: it must not panic; it must allocate within the
// decoders' bound (allocBound); and a value that decodes must encode into bytes that decode
// back to the same value.
func fuzzGenerated[T any, PT tarsStruct[T]](t *testing.T, input []byte) {
	var v T
	var err error
	checkGeneratedAlloc(t, input, func() any {
		v = *new(T)
		err = PT(&v).UnmarshalTars(input)
		return &v
	})
	if err != nil {
		return
	}
	encoded := PT(&v).MarshalTars(nil)
	var again T
	if err := PT(&again).UnmarshalTars(encoded); err != nil {
		t.Fatalf("re-decoding %x (encoded from %x): %v", encoded, input, err)
	}
	// %v prints maps sorted, floats exactly (NaN as NaN), and an empty slice or map as a nil
	// one: an optional field that decoded empty is not written, and decodes again as nil.
	if got, want := fmt.Sprintf("%+v", again), fmt.Sprintf("%+v", v); got != want {
		t.Fatalf("re-decoded value differs:\n got %s\nwant %s", got, want)
	}
}

// checkGeneratedAlloc fails if decoding input allocated more than allocBound. The heap's
// counter also sees what other goroutines allocate meanwhile (the fuzzing engine's), so a
// decode over the bound is measured again: it fails only if it is over the bound three times.
func checkGeneratedAlloc(t *testing.T, input []byte, decode func() any) {
	t.Helper()
	var alloc, bound uint64
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := decode()
		runtime.ReadMemStats(&after)
		alloc = after.TotalAlloc - before.TotalAlloc
		bound = allocBound(len(input), goWeight(reflect.ValueOf(v).Elem()))
		if alloc <= bound {
			return
		}
	}
	t.Fatalf("decoding %d bytes allocated %d bytes (%.1f per byte), bound %d", len(input), alloc,
		float64(alloc)/float64(max(len(input), 1)), bound)
}

// allocBound is what decoding n input bytes into a value whose Go form weighs weight bytes
// (goWeight) may allocate: maxAllocPerByte per input byte, plus the value itself grown to its
// size by append and map growth, which allocate up to 5 times the final size along the way
// (a slice past 256 elements grows by a quarter, and 1 + 1/1.25 + 1/1.25² + ... = 5), plus a
// constant for the allocator's minimum sizes and the errors of a failed decode, wrapped once
// per nesting level. Valid input can weigh more in Go than on the wire (an empty struct in a
// vector is 2 bytes on the wire, a Tree 48 bytes in Go), so no bound on input bytes alone
// can hold for it; what input cannot do is make a decoder allocate for elements it does not
// hold.
func allocBound(n int, weight uint64) uint64 {
	return maxAllocPerByte*uint64(n) + 5*weight + 4096
}

// goWeight returns how many bytes v's Go form holds outside v itself: the elements of its
// slices (len, not cap: what the input really held), its map entries (a slot at the load and
// rounding of mapEntryCost), its strings' bytes, and so on down.
func goWeight(v reflect.Value) uint64 {
	var w uint64
	switch v.Kind() {
	case reflect.String:
		w = uint64(v.Len())
	case reflect.Slice:
		w = uint64(v.Len()) * uint64(v.Type().Elem().Size())
		for i := range v.Len() * holdsMore(v.Type().Elem()) {
			w += goWeight(v.Index(i))
		}
	case reflect.Map:
		w = uint64(v.Len()) * mapEntryCost(v.Type().Key().Size(), v.Type().Elem().Size())
		for it := v.MapRange(); it.Next(); {
			w += goWeight(it.Key()) + goWeight(it.Value())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			w += goWeight(v.Field(i))
		}
	}
	return w
}

// holdsMore is 1 for a type whose values can hold memory outside themselves, 0 for a scalar.
func holdsMore(t reflect.Type) int {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Struct:
		return 1
	}
	return 0
}

// mapEntryCost is what a Go map holding one more entry of a key and a value of these sizes
// weighs: the slot and its control byte at a load of 7/8, in tables rounded up to a power of
// two (up to twice as much).
func mapEntryCost(keySize, valueSize uintptr) uint64 {
	return uint64(keySize+valueSize+1) * 16 / 7
}
