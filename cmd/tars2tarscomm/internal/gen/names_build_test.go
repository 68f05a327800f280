package gen

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	tarsparser "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// buildGenerated parses the .tars files (name -> source, the first is the one given to Load),
// generates Go under a package directory that exists only in a build overlay, and compiles it.
// It returns the compiler's output on failure ("" when it builds), or the generator's error.
func buildGenerated(t *testing.T, srcs [][2]string) (buildOut string, genErr error) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, s := range srcs {
		p := filepath.Join(dir, s[0])
		if err := os.WriteFile(p, []byte(s[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	prog, err := tarsparser.Load(paths, nil)
	if err != nil {
		t.Fatalf("parser refused a legal file: %v", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sub := "zzbuild" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	prefix := "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/gen/" + sub
	files, err := Generate(prog, Options{ImportPrefix: prefix})
	if err != nil {
		return "", err
	}
	repl := map[string]string{}
	out := filepath.Join(dir, "out")
	for i, f := range files {
		tmp := filepath.Join(out, strings.ReplaceAll(f.Path, "/", "_")+string(rune('a'+i))+".go")
		if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tmp, f.Content, 0o644); err != nil {
			t.Fatal(err)
		}
		repl[filepath.Join(cwd, sub, filepath.FromSlash(f.Path))] = tmp
	}
	ov, _ := json.Marshal(map[string]any{"Replace": repl})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", ovPath, prefix+"/...")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return string(b), nil
	}
	return "", nil
}

// mustBuild: a legal .tars file must either be refused by the generator with an error or
// generate Go that compiles.
func mustBuild(t *testing.T, srcs ...[2]string) {
	t.Helper()
	out, genErr := buildGenerated(t, srcs)
	if genErr != nil {
		t.Fatalf("generator refused a legal file: %v", genErr)
	}
	if out != "" {
		t.Fatalf("generated code does not compile:\n%s", out)
	}
}

// The tests below give the generator legal .tars files whose names meet the names of the Go it
// writes; each once made Go that did not compile (or a wrong default), and now compiles or is
// refused with an error naming the collision.

// A function named SetPushCallback: its proxy method would collide with the generated
// IProxy.SetPushCallback.
func TestGenFuncNamedSetPushCallback(t *testing.T) {
	out, genErr := buildGenerated(t, [][2]string{{"m.tars", `module M { interface I { void SetPushCallback(int x); }; };`}})
	if genErr == nil && out != "" {
		t.Fatalf("no generator error, and the output does not compile:\n%s", out)
	}
}

// A module whose plain import alias would be a local name of the generated methods (d, the
// *codec.Decoder).
func TestGenModuleAliasShadowedByDecoder(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `
module D { enum Color { RED, BLUE }; struct P { 0 optional int x; }; };
module App { struct S { 0 optional D::Color c; 1 optional vector<D::P> ps; }; };
`})
}

// A module whose plain import alias would be a package the generated file imports (server).
func TestGenModuleNamedServer(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `
module Server { struct Info { 0 optional int x; }; };
module App { interface I { int get(Server::Info in1, out Server::Info out1); }; };
`})
}

// A module named like a Go keyword: its plain import alias would be the keyword.
func TestGenModuleNamedGoKeyword(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `
module Type { struct Info { 0 optional int x; }; };
module App { struct S { 0 optional Type::Info i; }; };
`})
}

// A module named like a predeclared Go type: its plain alias would shadow the type.
func TestGenModuleNamedPredeclared(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `
module Int32 { struct Info { 0 optional int x; }; };
module App { struct S { 0 optional Int32::Info i; 1 optional int n; }; };
`})
}

// A parameter named like the module of the return type: the Future method's body names the
// type through the import alias, which the parameter would hide.
func TestGenParamNamedLikeModule(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `
module User { struct Info { 0 optional string name; }; };
module App { interface UserSvc { User::Info getUser(long user); }; };
`})
}

// Two interfaces whose args/result type names (_<I>_<f>_args) coincided.
func TestGenArgsTypeCollision(t *testing.T) {
	out, genErr := buildGenerated(t, [][2]string{{"m.tars", `
module M {
	interface I { void f_x(int a); };
	interface I_f { void x(int a); };
};
`}})
	if genErr == nil && out != "" {
		t.Fatalf("no generator error, and the output does not compile:\n%s", out)
	}
}

// Two structs differing only in case, in two files of one module: refused across files as in
// one (the check was per file).
func TestGenCaseCollisionAcrossFiles(t *testing.T) {
	out, genErr := buildGenerated(t, [][2]string{
		{"a.tars", `module M { struct S { 0 optional int a; }; };`},
		{"b.tars", `module M { struct s { 0 optional int a; }; };`},
	})
	if genErr == nil && out != "" {
		t.Fatalf("no generator error, and the output does not compile:\n%s", out)
	}
}

// An in parameter ret (renamed ret_) beside an out parameter ret_.
func TestGenParamsRetAndRetUnderscore(t *testing.T) {
	out, genErr := buildGenerated(t, [][2]string{{"m.tars", `module M { interface I { int f(int ret, out int ret_); }; };`}})
	if genErr == nil && out != "" {
		t.Fatalf("no generator error, and the output does not compile:\n%s", out)
	}
}

// A struct named New<I>Proxy beside interface I (NewIProxy was not among the declared names).
func TestGenNewProxyCollision(t *testing.T) {
	out, genErr := buildGenerated(t, [][2]string{{"m.tars", `module M { struct NewIProxy { 0 optional int a; }; interface I { void f(); }; };`}})
	if genErr == nil && out != "" {
		t.Fatalf("no generator error, and the output does not compile:\n%s", out)
	}
}

// A C escape in a string default means what it means in C++ (tars2cpp) and Go (tars2go copies
// the literal into Go source): "a\nb" is a, newline, b. The generator kept the backslash.
func TestGenStringDefaultEscape(t *testing.T) {
	prog, err := tarsparser.LoadSource("m.tars", `module M { struct S { 0 optional string s = "a\nb\tc"; }; };`, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(prog, Options{ImportPrefix: "example.com/x"})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[0].Content)
	if !strings.Contains(src, `S: "a\nb\tc"`) {
		i := strings.Index(src, "*st = S{")
		t.Fatalf("default not decoded as C escapes; Reset has: %s", src[i:i+40])
	}
}

// Two .tars files of one base name in one module would write one Go file: the second replaced
// the first without a word. They are refused, naming both.
func TestGenSameBaseNameRefused(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, sub := range []string{"x", "y"} {
		p := filepath.Join(dir, sub, "T.tars")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "module Dup { struct S" + string(rune('A'+i)) + " { 0 optional int a; }; };"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	prog, err := tarsparser.Load(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(prog, Options{ImportPrefix: "example.com/gen"})
	if err == nil || !strings.Contains(err.Error(), "both generate dup/t.tars.go") {
		t.Fatalf("two T.tars of module Dup: err = %v, want both named", err)
	}
}

// A file that starts with a byte order mark (saved by a Windows editor) parses, and the same
// file reached by two spellings of its path is read once.
func TestGenBOMAndPathSpellings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "B.tars")
	if err := os.WriteFile(p, []byte("\ufeffmodule B { struct S { 0 optional int a; }; };"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(must(os.Getwd()), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tarsparser.Load([]string{p, rel}, nil); err != nil {
		t.Fatalf("a file with a BOM, given by its absolute and its relative path: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// An interface without functions (legal TARS) imports only what its Go uses: context, codec and
// errors were imported and unused.
func TestGenEmptyInterface(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `module M { interface I { }; };`})
}

// A struct holding itself by value, directly or through another, has no finite size: refused
// at parse, naming the cycle (the Go did not compile: "invalid recursive type"). Through a
// vector it builds.
func TestGenRecursiveStruct(t *testing.T) {
	for _, src := range []string{
		`module R { struct S { 0 optional S s; }; };`,
		`module R { struct A { 0 optional B b; }; struct B { 0 optional A a; }; };`,
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "r.tars")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := tarsparser.Load([]string{p}, nil); err == nil || !strings.Contains(err.Error(), "holds itself by value") {
			t.Errorf("%s: err = %v, want the cycle refused", src, err)
		}
	}
	mustBuild(t, [2]string{"r.tars", `module R { struct S { 0 optional vector<S> kids; 1 optional map<int, S> byID; }; };`})
}

// Two modules that use each other's types are legal in .tars (C++ headers may include each
// other) but make Go packages that import each other: the generator refuses them, naming the
// modules and the files, where it used to write code that did not compile (and exit 0).
func TestGenModuleCycleRefused(t *testing.T) {
	prog, err := tarsparser.LoadSource("cyc.tars", `
module Base { struct Point { 0 optional int x; }; };
module Geo { struct Area { 0 optional vector<Base::Point> corners; }; };
module Base { struct Region { 1 optional Geo::Area area; }; };
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(prog, Options{ImportPrefix: "example.com/gen"})
	if err == nil || !strings.Contains(err.Error(), "module Base uses Geo") || !strings.Contains(err.Error(), "module Geo uses Base") {
		t.Fatalf("modules using each other: err = %v, want the cycle named", err)
	}
	// One way only compiles as before.
	prog, err = tarsparser.LoadSource("ok.tars", `
module Base { struct Point { 0 optional int x; }; };
module Geo { struct Area { 0 optional vector<Base::Point> corners; }; };
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(prog, Options{ImportPrefix: "example.com/gen"}); err != nil {
		t.Fatalf("one module using another: %v", err)
	}
}

// A function's parameters take tags 1, 2, ... (the return value 0), and a TARS tag is one byte:
// a 256th parameter is refused, naming the limit (the parser refuses a struct field tag of 256
// too). It used to be generated with tag 256, Go that did not compile ("256 overflows byte").
func TestGenFunc256ParamsRefused(t *testing.T) {
	params := func(n int) string {
		var ps []string
		for i := range n {
			ps = append(ps, fmt.Sprintf("int a%d", i))
		}
		return "module M { interface I { void f(" + strings.Join(ps, ", ") + "); }; };"
	}
	if _, err := tarsparser.LoadSource("m.tars", params(256), nil); err == nil || !strings.Contains(err.Error(), "more than 255 parameters") {
		t.Fatalf("256 parameters: err = %v, want the limit named", err)
	}
	prog, err := tarsparser.LoadSource("m.tars", params(255), nil)
	if err != nil {
		t.Fatalf("255 parameters: %v", err)
	}
	if _, err := Generate(prog, Options{ImportPrefix: "example.com/gen"}); err != nil {
		t.Fatalf("255 parameters: %v", err)
	}
}
