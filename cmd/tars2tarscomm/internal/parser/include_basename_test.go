package parser

import (
	"os"
	"path/filepath"
	"testing"
)

// TARS code bases write #include with the path the file has where it was written: the published
// protocol directory of a TARS installation ("/home/tarsproto/<App>/<Server>/X.tars", where
// `make release` copies a server's .tars files) or a path relative to the original repository
// layout ("../../Common/Base.tars"). A user who has the included file elsewhere passes that
// directory as an include directory. TarsGo's tars2go then finds it: a file not found as
// written is looked up by its base name in each -include directory (parse.NewParse); TarsCpp's
// tars2cpp with --currentPriority looks the base name up in the current directory first
// (TarsParse::getFilePath).
//
// Before, tars2tarscomm did not (a review of the generator): an absolute path was tried only as
// written, and a relative one only joined whole to each -I directory, so both files below failed
// with "#include ...: file not found", where tars2go generates them. Now the base name is looked
// for beside the file and in the include directories once the path as written fails.
func TestIncludeFoundByBaseName(t *testing.T) {
	dir := t.TempDir()
	protos := filepath.Join(dir, "protos")
	if err := os.MkdirAll(protos, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(protos, "Base.tars"), []byte("module Base { struct P { 0 optional int x; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, inc := range []string{"/home/tarsproto/Base/BaseServer/Base.tars", "../../Common/Base.tars"} {
		src := "#include \"" + inc + "\"\nmodule App { struct S { 0 optional Base::P p; }; };\n"
		if _, err := LoadSource(filepath.Join(dir, "app", "App.tars"), src, []string{protos}); err != nil {
			t.Errorf("#include %q with Base.tars in the include directory %s: %v", inc, protos, err)
		}
	}
}

// A server's Hello.tars includes another application's published Hello.tars
// ("/home/tarsproto/Up/UpServer/Hello.tars", a different file of the same base name); the user
// passes the directory that holds it with -I. The base-name lookup tried beside the including
// file first, found the including file itself, and refused with an #include cycle, never
// reaching the -I directory that holds the file meant (a review of the change); it skips the
// including file now.
func TestIncludeBaseNameSameAsIncluder(t *testing.T) {
	dir := t.TempDir()
	app, up := filepath.Join(dir, "app"), filepath.Join(dir, "up")
	for _, d := range []string{app, up} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(up, "Hello.tars"), []byte("module Up { struct P { 0 optional int x; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "#include \"/home/tarsproto/Up/UpServer/Hello.tars\"\nmodule App { struct S { 0 optional Up::P p; }; };\n"
	path := filepath.Join(app, "Hello.tars")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{path}, []string{up}); err != nil {
		t.Fatalf("Hello.tars in -I %s: %v", up, err)
	}
}

// The same with a sibling: app/ holds its own Base.tars beside App.tars, and App.tars includes
// the other application's published Base.tars, which the user passes with -I. The base-name
// lookup took the sibling (an unrelated file) before the -I directory; it looks in the -I
// directories first now, as tars2go does.
func TestIncludeBaseNameIncludeDirFirst(t *testing.T) {
	dir := t.TempDir()
	app, up := filepath.Join(dir, "app"), filepath.Join(dir, "up")
	for _, d := range []string{app, up} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(up, "Base.tars"), []byte("module Up { struct P { 0 optional int x; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "Base.tars"), []byte("module App { struct Q { 0 optional int y; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "#include \"/home/tarsproto/Up/UpServer/Base.tars\"\nmodule App { struct S { 0 optional Up::P p; }; };\n"
	path := filepath.Join(app, "App.tars")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{path}, []string{up}); err != nil {
		t.Fatalf("Base.tars in -I %s: %v", up, err)
	}
}
