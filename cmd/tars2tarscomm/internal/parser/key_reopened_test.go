package parser

import (
	"slices"
	"strings"
	"testing"
)

// key[S, ...] may follow S in a later block of the same module (a module reopened further down
// the file), as tars2go takes it; it was refused, "no struct S declared before it", because only
// the current block was searched (a review of the generator). A name no block declares is still
// refused.
func TestKeyInReopenedModule(t *testing.T) {
	src := "module M { struct S { 0 optional int a; 1 optional string b; }; };\nmodule M { key[S, a, b]; };\n"
	p, err := LoadSource("/x/m.tars", src, nil)
	if err != nil {
		t.Fatalf("key[] in a reopened block: %v", err)
	}
	if got := p.Modules["M"][0].Structs[0].Key; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("S's key is %q, want [a b]", got)
	}
	_, err = LoadSource("/x/m.tars", "module M { struct S { 0 optional int a; }; };\nmodule M { key[T, a]; };\n", nil)
	if err == nil || !strings.Contains(err.Error(), "no struct T") {
		t.Fatalf("key[T] with no struct T: error %v, want one naming T", err)
	}
}
