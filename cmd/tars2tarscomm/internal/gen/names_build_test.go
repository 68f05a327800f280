package gen

import (
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	tarsparser "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// overlayGen is Go generated from .tars files under a package directory of this one that exists
// only in a build overlay (genOverlay): go build and go test see it there.
type overlayGen struct {
	dir    string            // the test's temporary directory
	prefix string            // the import path of the generated tree
	pkgDir string            // where the tree would be on disk
	repl   map[string]string // overlay: path on disk -> the file holding it
}

// genOverlay writes the .tars files (name -> source, the first is the one given to Load), parses
// and generates them into an overlay under a directory named after tag and the test. It returns
// the generator's error, if any.
func genOverlay(t *testing.T, tag string, srcs [][2]string) (*overlayGen, error) {
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
	sub := tag + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	g := &overlayGen{dir: dir, prefix: "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/gen/" + sub,
		pkgDir: filepath.Join(cwd, sub), repl: map[string]string{}}
	files, err := Generate(prog, Options{ImportPrefix: g.prefix})
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		g.add(t, f.Path, strings.ReplaceAll(f.Path, "/", "_")+string(rune('a'+i))+".go", f.Content)
	}
	return g, nil
}

// add puts content in the overlay at rel (a slash path under the tree), written to file name.
func (g *overlayGen) add(t *testing.T, rel, name string, content []byte) {
	t.Helper()
	tmp := filepath.Join(g.dir, "out", name)
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		t.Fatal(err)
	}
	g.repl[filepath.Join(g.pkgDir, filepath.FromSlash(rel))] = tmp
}

// overlay writes the overlay file go's -overlay flag reads and returns its path.
func (g *overlayGen) overlay(t *testing.T) string {
	t.Helper()
	ov, _ := json.Marshal(map[string]any{"Replace": g.repl})
	p := filepath.Join(g.dir, "overlay.json")
	if err := os.WriteFile(p, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildGenerated parses the .tars files (name -> source, the first is the one given to Load),
// generates Go under a package directory that exists only in a build overlay, and compiles it.
// It returns the compiler's output on failure ("" when it builds), or the generator's error.
func buildGenerated(t *testing.T, srcs [][2]string) (buildOut string, genErr error) {
	t.Helper()
	g, err := genOverlay(t, "zzbuild", srcs)
	if err != nil {
		return "", err
	}
	b, err := exec.Command("go", "build", "-overlay", g.overlay(t), g.prefix+"/...").CombinedOutput()
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

// generateDups writes a module Dup file at each path (a struct of its own in each) and returns
// what Generate says of them.
func generateDups(t *testing.T, paths ...string) error {
	t.Helper()
	for i, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "module Dup { struct S" + string(rune('A'+i)) + " { 0 optional int a; }; };"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := tarsparser.Load(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(prog, Options{ImportPrefix: "example.com/gen"})
	return err
}

// Two .tars files of one base name in one module would write one Go file: the second replaced
// the first without a word. They are refused, naming both.
func TestGenSameBaseNameRefused(t *testing.T) {
	dir := t.TempDir()
	err := generateDups(t, filepath.Join(dir, "x", "T.tars"), filepath.Join(dir, "y", "T.tars"))
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

// A parameter whose IDL name is the Go name of a type of its own package (written in upper case,
// as TARS code bases that name parameters like types do) is renamed with a trailing underscore,
// so that it does not shadow the type in the generated Future method, whose body says
// future.Make[T]() and var zero T (and var r IFResult for a function with out parameters).
// Before, such a file generated methods that did not compile: "Status (parameter) is not a type".
func TestGenParamNamedLikeType(t *testing.T) {
	for name, src := range map[string]string{
		"enum return":   `module M { enum Status { OK, BAD }; interface I { Status check(string Status); }; };`,
		"struct return": `module M { struct Info { 0 optional int a; }; interface I { Info get(int Info); }; };`,
		"vector return": `module M { struct Info { 0 optional int a; }; interface I { vector<Info> list(int Info); }; };`,
		"result struct": `module M { interface I { int f(out int x, int IFResult); }; };`,
		"enumerator":    `module M { enum Status { OK, BAD }; interface I { Status check(int Status_OK, int Status, int Status_); }; };`,
		"two blocks":    `module M { struct Info { 0 optional int a; }; }; module M { interface I { Info get(out Info Info); }; };`,
	} {
		t.Run(name, func(t *testing.T) {
			mustBuild(t, [2]string{"m.tars", src})
		})
	}
}

// A parameter named _ (a legal TARS and C++ name) is renamed __, as a keyword gets a trailing
// underscore, and a parameter already named __ then takes ___. Before, _ was kept as the blank
// identifier, which the proxy methods read, and the methods did not compile: "cannot use _ as
// value".
func TestGenParamNamedBlank(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `module M { interface I { int f(int _); int g(int _, out int __); }; };`})
}

// Two modules whose plain import aliases (moduleAlias) coincide, used from one file, are imported
// under distinct names: the first, by import path, under the plain alias, the other with a
// number added (A::B and A_B are both a_b; AB, two letters, and Abtars both abtars). A parameter
// named like the numbered alias is renamed, and a module whose plain alias is the numbered one
// (A_B2) keeps it. Before, the file imported two packages under one name and did not compile:
// "a_b redeclared in this block".
func TestGenModuleAliasesCollide(t *testing.T) {
	for name, src := range map[string]string{
		"nested A B and A_B": `module A { module B { struct P { 0 optional int x; }; }; };
module A_B { struct Q { 0 optional int y; }; };
module C { struct S { 0 optional A::B::P p; 1 optional A_B::Q q; }; };`,
		"AB and Abtars": `module AB { struct P { 0 optional int x; }; };
module Abtars { struct Q { 0 optional int y; }; };
module M { struct S { 0 optional AB::P p; 1 optional Abtars::Q q; }; };`,
		"numbered alias taken": `module A { module B { struct P { 0 optional int x; }; }; };
module A_B { struct Q { 0 optional int y; }; };
module A_B2 { struct R { 0 optional int z; }; };
module C {
	struct S { 0 optional A::B::P p; 1 optional A_B::Q q; 2 optional A_B2::R r; };
	interface I { A_B::Q f(A::B::P a_b, A_B2::R a_b2, int a_b3, out A::B::P a_b4); };
};`,
	} {
		t.Run(name, func(t *testing.T) {
			mustBuild(t, [2]string{"m.tars", src})
		})
	}
}

// Module names that make import aliases Go refuses or that the generated methods' locals shadow
// get "tars" added: init (no package may be imported as init) and the nesting-depth locals of
// encode and decode (ok1, i2, ...). Before, such a module used from another did not compile:
// "cannot import package as init", "ok1.S is not a type".
func TestGenModuleAliasReserved(t *testing.T) {
	for name, src := range map[string]string{
		"init": `module Init { struct S { 0 optional int a; }; };
module App { struct T { 0 optional Init::S s; }; };`,
		"ok1": `module Ok1 { struct S { 0 optional int a; }; };
module App { struct T { 0 optional vector<map<int, vector<Ok1::S> > > s; }; };`,
		"i10": `module I10 { enum E { A }; };
module App { struct T { 0 optional vector<vector<vector<vector<vector<vector<vector<vector<vector<vector<vector<I10::E> > > > > > > > > > > s; }; };`,
	} {
		t.Run(name, func(t *testing.T) {
			mustBuild(t, [2]string{"m.tars", src})
		})
	}
}

// A float default or constant that rounds to no finite float32 is refused by the parser, naming
// the value and the type as for an integer out of range; FLT_MAX as printed (3.4028235e38, a
// little above math.MaxFloat32, which Go rounds down) and a double's larger values are taken.
// Before, the parser checked the range of integers only and wrote the value into Go as a float32
// constant, which did not compile: "1e+39 (untyped float constant) overflows float32".
func TestGenFloatValueOutOfRange(t *testing.T) {
	for _, src := range []string{
		`module M { struct S { 0 optional float f = 1e39; }; };`,
		`module M { struct S { 0 optional float f = -1e39; }; };`,
		`module M { const float F = 3.5e38; };`,
	} {
		_, err := tarsparser.LoadSource("m.tars", src, nil)
		if err == nil || !strings.Contains(err.Error(), "does not fit type float") {
			t.Errorf("%s: err = %v, want the value refused", src, err)
		}
	}
	mustBuild(t, [2]string{"m.tars", `module M {
	const float MAX = 3.4028235e38;
	const float MIN = -3.4028235e38;
	const double D = 1e39;
	struct S { 0 optional float f = 3.4028235e38; 1 optional double d = -1e300; };
};`})
}

// A module named Main (or Init) becomes Go package main_ (init_), in directory main, which other
// generated packages import. Before, it became package main, a program without func main that no
// package may import, and did not build: "function main is undeclared in the main package".
func TestGenModuleNamedMain(t *testing.T) {
	for _, src := range []string{
		`module Main { struct S { 0 optional int a; }; };`,
		`module Main { struct S { 0 optional int a; }; }; module App { struct T { 0 optional Main::S s; }; };`,
		`module Init { struct S { 0 optional int a; }; }; module App { struct T { 0 optional Init::S s; }; };`,
	} {
		mustBuild(t, [2]string{"m.tars", src})
	}
	prog, err := tarsparser.LoadSource("m.tars", `module Main { struct S { 0 optional int a; }; };`, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(prog, Options{ImportPrefix: "example.com/x"})
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Path != "main/m.tars.go" || !strings.Contains(string(files[0].Content), "\npackage main_\n") {
		t.Fatalf("module Main: %s with\n%.200s", files[0].Path, files[0].Content)
	}
}

// The generated file is named after the .tars file, and go build reads a file's name: a .tars
// file whose name starts with _ or . makes a Go file without them, and one whose name before its
// first dot ends in _<GOOS> or _<GOARCH> (before an optional _test) gets _tars there. Before,
// _common.tars made _common.tars.go, which Go ignores, and Pay_android.tars pay_android.tars.go,
// which Go builds only on android: the package that included them did not compile ("no Go
// files", "build constraints exclude all Go files").
func TestGenFileNameGoIgnores(t *testing.T) {
	for name, file := range map[string]string{
		"leading underscore": "_common.tars",
		"leading dot":        ".common.tars",
		"GOOS suffix":        "Pay_android.tars",
		"GOARCH suffix":      "pay_amd64.tars",
		"GOOS and test":      "pay_linux_test.tars",
		"dotted":             "pay_arm64.v2.tars",
	} {
		t.Run(name, func(t *testing.T) {
			mustBuild(t,
				[2]string{"b.tars", "#include \"" + file + "\"\nmodule B { struct S { 0 optional A::P p; }; };"},
				[2]string{file, `module A { struct P { 0 optional int x; }; };`})
		})
	}
}

// outputBase changes only the names go build would ignore or constrain: the names of ordinary
// .tars files (and so the repository's generated files) stay as they were, and every GOOS and
// GOARCH of the go command in use (go tool dist list) is renamed. Before, the base name was
// used as it was, and Go left out or constrained the files of _x.tars and x_<GOOS>.tars.
func TestGenOutputBase(t *testing.T) {
	for in, want := range map[string]string{
		"QueryF.tars": "queryf", "dir/App_Common.tars": "app_common", "linux.tars": "linux",
		"x_test.tars": "x_test", "a.b_linux.tars": "a.b_linux", "x_linuxy.tars": "x_linuxy",
		"_common.tars": "common", "__x.tars": "x", "_.tars": "tars", "Pay_android.tars": "pay_android_tars",
		"x_linux_amd64.tars": "x_linux_amd64_tars", "x_windows_test.tars": "x_windows_test_tars",
		"x_js.v1.tars": "x_js_tars.v1",
	} {
		if got := outputBase(in); got != want {
			t.Errorf("outputBase(%q) = %q, want %q", in, got, want)
		}
	}
	list, err := exec.Command("go", "tool", "dist", "list").Output()
	if err != nil {
		t.Fatalf("go tool dist list: %v", err)
	}
	words := map[string]bool{}
	for _, l := range strings.Fields(string(list)) {
		goos, goarch, _ := strings.Cut(l, "/")
		words[goos], words[goarch] = true, true
	}
	maps.Copy(words, knownGOOS)
	maps.Copy(words, knownGOARCH)
	// go/build's own reading of a file name, on two platforms that share no GOOS or GOARCH: a
	// name it constrains to one GOOS or GOARCH is left out on one of them.
	var ctxts []build.Context
	for _, p := range [][2]string{{"linux", "amd64"}, {"windows", "arm64"}} {
		c := build.Default
		c.GOOS, c.GOARCH = p[0], p[1]
		c.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("package p\n")), nil }
		ctxts = append(ctxts, c)
	}
	for w := range words {
		for _, in := range []string{"p_" + w, "p_" + w + "_test", "p_linux_" + w, "_p_" + w + ".v2"} {
			name := outputBase(in+".tars") + ".tars.go"
			for _, c := range ctxts {
				if ok, err := c.MatchFile("/x", name); err != nil || !ok {
					t.Errorf("%s.tars makes %s, which go build on %s/%s leaves out (%v)", in, name, c.GOOS, c.GOARCH, err)
				}
			}
		}
	}
}

// Two .tars files whose output names are made the same by the renaming (Pay_android.tars and
// pay_android_tars.tars) are refused, naming both, as two files of one base name are. Before,
// there was no renaming, and the first made pay_android.tars.go, which Go builds on android only.
func TestGenRenamedOutputCollisionRefused(t *testing.T) {
	dir := t.TempDir()
	err := generateDups(t, filepath.Join(dir, "Pay_android.tars"), filepath.Join(dir, "pay_android_tars.tars"))
	if err == nil || !strings.Contains(err.Error(), "both generate dup/pay_android_tars.tars.go") {
		t.Fatalf("Pay_android.tars and pay_android_tars.tars: err = %v, want both named", err)
	}
}
