package gen

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tarsparser "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// FuzzGenerate: whatever a .tars file says, the parser and the generator end with an error or
// with Go files that parse; never with a panic. A file the parser takes is one the generator must
// take too: an error of the generator's on it is a failure (the parser should have said what is
// wrong, with a position).
func FuzzGenerate(f *testing.F) {
	for _, name := range []string{"all.tars", "base.tars"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	f.Add("module M { struct S { 0 require int a; }; interface I { int f(S s, out S t); }; };")
	f.Add("module M { enum E { A = 1, B }; const E X = A; };")
	f.Fuzz(func(t *testing.T, src string) {
		// Beside the seeds, so that #include "base.tars" resolves as in the seeds.
		prog, err := tarsparser.LoadSource(filepath.Join("..", "..", "testdata", "fuzz.tars"), src, nil)
		if err != nil {
			return
		}
		files, err := Generate(prog, Options{ImportPrefix: "example.com/out"})
		if err != nil {
			t.Fatalf("the parser took the file, the generator did not: %v\n%s", err, src)
		}
		for _, gf := range files {
			if _, err := parser.ParseFile(token.NewFileSet(), gf.Path, gf.Content, 0); err != nil {
				t.Fatalf("%s does not parse: %v\n%s", gf.Path, err, src)
			}
		}
	})
}

// TestCommentNotUTF8: a comment in another encoding (GBK here, common in TARS code bases) is
// carried into the Go file with U+FFFD for what is not UTF-8, and the file is Go. Before, the
// bytes were copied as they were and the generator failed: "generated code does not parse".
func TestCommentNotUTF8(t *testing.T) {
	src := "module M {\n// \xc4\xe3\xba\xc3 (GBK)\nstruct S { 0 require int a; /* NUL \x00 BOM \ufeff */ };\n};\n"
	prog, err := tarsparser.LoadSource("m.tars", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(prog, Options{ImportPrefix: "example.com/out"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files, want 1", len(files))
	}
	out := string(files[0].Content)
	for _, want := range []string{"// \uFFFD (GBK)", "// NUL \uFFFD BOM \uFFFD"} {
		if !strings.Contains(out, want) {
			t.Errorf("generated file lacks %q:\n%s", want, out)
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), files[0].Path, files[0].Content, 0); err != nil {
		t.Fatal(err)
	}
}
