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
