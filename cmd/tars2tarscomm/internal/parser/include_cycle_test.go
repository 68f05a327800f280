package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIncludeCycleNamesWhere: two files that include each other are refused with the file, line
// and column of the #include that closes the cycle. Before, the error named only the file
// ("B.tars: #include cycle").
func TestIncludeCycleNamesWhere(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "A.tars")
	if err := os.WriteFile(filepath.Join(dir, "B.tars"), []byte("#include \"A.tars\"\nmodule B { struct P { 0 optional int x; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a, []byte("#include \"B.tars\"\nmodule A { struct S { 0 optional B::P p; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{a}, nil)
	if err == nil {
		t.Fatal("two files including each other were accepted")
	}
	if want := "B.tars:1:"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("err = %v, want the cycle and where it closes (%s...)", err, want)
	}
}
