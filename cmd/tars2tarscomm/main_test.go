package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/gen"
	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// update rewrites the golden files: go test ./cmd/tars2tarscomm -update (make generate writes
// the same files).
var update = flag.Bool("update", false, "rewrite the golden files")

const testgenImport = "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen"

// TestGolden: the generated test package (compiled and tested in internal/testgen) is what the
// generator writes for testdata/all.tars and the base.tars it includes.
func TestGolden(t *testing.T) {
	prog, err := parser.Load([]string{"cmd/tars2tarscomm/testdata/all.tars"}, nil)
	if err != nil {
		// Paths in the golden headers are relative to the repository root, as make generate runs.
		t.Fatal(err)
	}
	files, err := gen.Generate(prog, gen.Options{ImportPrefix: testgenImport})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("generated %d files, want 2 (demo/base, demo/all)", len(files))
	}
	for _, f := range files {
		path := filepath.Join("cmd/tars2tarscomm/internal/testgen", f.Path)
		if *update {
			if err := os.WriteFile(path, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Content, want) {
			t.Errorf("%s differs from the generator's output: run make generate", path)
		}
	}
}

func TestMain(m *testing.M) {
	// The golden sources are named relative to the repository root.
	if err := os.Chdir("../.."); err != nil {
		panic(err)
	}
	code := m.Run()
	os.Exit(code)
}

func TestCheckFlag(t *testing.T) {
	args := []string{"-check", "-out", "cmd/tars2tarscomm/internal/testgen", "-import", testgenImport, "cmd/tars2tarscomm/testdata/all.tars"}
	if err := run(args); err != nil {
		t.Fatalf("-check on up-to-date files: %v", err)
	}
	dir := t.TempDir()
	args[2] = dir
	if err := run(args); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("-check on an empty directory: %v, want a stale error", err)
	}
	// Without -import, the import path comes from the go.mod above -out: the repository's here,
	// none in a temporary directory.
	if err := run([]string{"-check", "-out", "cmd/tars2tarscomm/internal/testgen", "cmd/tars2tarscomm/testdata/all.tars"}); err != nil {
		t.Fatalf("-check without -import: %v", err)
	}
	if err := run([]string{"-out", dir, "cmd/tars2tarscomm/testdata/all.tars"}); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Fatalf("outside a module without -import: %v, want a no go.mod error", err)
	}
	args = append(args[:0], "-out", dir, "-import", "example.com/x", "cmd/tars2tarscomm/testdata/all.tars")
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo", "all", "all.tars.go")); err != nil {
		t.Fatalf("no output: %v", err)
	}
}

// TestErrors: every error names file:line:column.
// TestImportPath: the import path of an output directory from the nearest go.mod, which may be
// above a directory that does not exist yet, in a nested module, with a quoted module path and
// comments.
func TestImportPath(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "// the app\nmodule example.com/app // its path\n\ngo 1.26\n")
	write(filepath.Join(root, "tools", "go.mod"), "module \"example.com/app/tools\"\n")
	write(filepath.Join(root, "bad", "go.mod"), "go 1.26\n")
	for _, c := range []struct{ dir, want string }{
		{root, "example.com/app"},
		{filepath.Join(root, "protocol"), "example.com/app/protocol"},
		{filepath.Join(root, "a", "b", "c"), "example.com/app/a/b/c"},
		{filepath.Join(root, "tools", "gen"), "example.com/app/tools/gen"},
	} {
		got, err := importPath(c.dir)
		if err != nil || got != c.want {
			t.Errorf("importPath(%s) = %q, %v; want %q", c.dir, got, err, c.want)
		}
	}
	if _, err := importPath(filepath.Join(root, "bad", "x")); err == nil || !strings.Contains(err.Error(), "no module line") {
		t.Errorf("go.mod without a module line: %v", err)
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"module M { struct S { 0 require int a; 0 optional int b; }; };", "x.tars:1:40: struct S: tag 0 of b already used by a"},
		{"module M { struct S { 0 require Nope a; }; };", "x.tars:1:33: undefined type Nope"},
		{"module M {\n  struct S { 0 require int a = \"x\"; };\n};", `x.tars:2:32: value "x" does not fit type int`},
		{"module M { struct S { 0 require byte a = 300; }; };", "x.tars:1:42: value 300 does not fit type byte"},
		{"module M { struct S { 0 require unsigned long a; }; };", `x.tars:1:42: unsigned "long"`},
		{"module M { enum E { A, B }; struct S { 0 optional E e = C; }; };", "x.tars:1:57: C is not an enumerator of E"},
		{"module M { interface I { int f(int a, int a); }; };", "x.tars:1:43: function f: parameter a declared twice"},
		{"module M { interface I { int f(); void f(); }; };", "x.tars:1:40: interface I: function f declared twice"},
		{"module M { struct S { 0 require vector<int> v; }; struct T { 0 require map<S, int> m; }; };", "x.tars:1:76: map key type holds a vector"},
		{"#include \"missing.tars\"\n", `x.tars:1:10: #include "missing.tars": file not found`},
		{"module M { struct S { 0 require int a; }; key[S, b]; };", "x.tars:1:50: key[S]: struct S has no field b"},
		{"module M { struct S { 0 require string s = \"abc; }; };", "x.tars:1:44: unterminated string"},
		{"module M { struct S { 0 require int a; } };", `x.tars:1:42: expected ";", found "}"`},
		{"module M { struct S { 0 require int a; }; struct S { 0 require int b; }; };", "x.tars:1:50: M::S redeclared (first declared at x.tars:1:19)"},
		{"module M { interface I { int f(); int Asyncf(); }; };", ""},
		{"module M { interface I { int f(); int asyncF(); }; };", "x.tars:1:39: function asyncF: generated method IProxy.AsyncF collides"},
		{"module M { struct S { 0 require int a; }; struct s { 0 require int a; }; };", "x.tars:1:50: generated Go name S collides"},
	} {
		prog, err := parser.LoadSource("x.tars", c.src, nil)
		if err == nil {
			_, err = gen.Generate(prog, gen.Options{ImportPrefix: "example.com/x"})
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", c.src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got error %v\nwant one containing %q", c.src, err, c.want)
		}
	}
}

// TestRewriteOnlyChanged: running the generator again leaves a file that already holds its
// output alone (its modification time too, so that builds see nothing changed), replaces one
// that differs, and leaves no temporary file behind. Files used to be rewritten in place every
// run.
func TestRewriteOnlyChanged(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-out", dir, "-import", "example.com/x", "cmd/tars2tarscomm/testdata/all.tars"}
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "demo", "all", "all.tars.go")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("an up-to-date file was rewritten: %v, %v (want modified at %v)", fi.ModTime(), err, old)
	}
	if err := os.WriteFile(path, []byte("package all // edited\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("an edited file was not regenerated (%d bytes, %v)", len(got), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("regenerated file's mode: %v, %v; want 0644", fi.Mode(), err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestFlagAfterFiles: a flag written after the files (which the flag package leaves as an
// argument) is named as such, instead of "open -out: no such file or directory".
func TestFlagAfterFiles(t *testing.T) {
	err := run([]string{"cmd/tars2tarscomm/testdata/all.tars", "-out", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "flag -out after the files") {
		t.Fatalf("a flag after the files: %v, want it named", err)
	}
}
