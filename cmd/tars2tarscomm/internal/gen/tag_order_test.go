package gen

import (
	"bytes"
	"testing"

	tarsparser "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// TestFieldsOutOfTagOrder: a struct whose fields are written out of tag order is legal TARS
// (tars2cpp and tars2go sort the members by tag); it generates what the same struct written in
// order does: the fields, the encoding and the decoding in tag order. Before, it was refused
// ("tags must ascend").
func TestFieldsOutOfTagOrder(t *testing.T) {
	gen := func(src string) []byte {
		t.Helper()
		prog, err := tarsparser.LoadSource("x.tars", src, nil)
		if err != nil {
			t.Fatalf("parser refused %q: %v", src, err)
		}
		files, err := Generate(prog, Options{ImportPrefix: "example.com/x"})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, f := range files {
			b.WriteString(f.Path + "\n")
			b.Write(f.Content)
		}
		return b.Bytes()
	}
	inOrder := gen("module M { struct S { 0 optional int a; 1 require string b; 2 optional vector<int> c; }; };")
	shuffled := gen("module M { struct S { 2 optional vector<int> c; 0 optional int a; 1 require string b; }; };")
	if !bytes.Equal(inOrder, shuffled) {
		t.Fatalf("a struct written out of tag order generates other code than in order:\n%s\n---\n%s", shuffled, inOrder)
	}
}
