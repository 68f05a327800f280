package parser

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAbsoluteInclude: an #include of an absolute path ("/opt/tars/include/BaseF.tars",
// as build scripts that generate .tars includes write them) names one file; TarsCpp opens it as
// written before it tries its include directories (TarsParse::getFilePath). Before, include
// joined the name to the including file's directory and to each -I directory (filepath.Join("dir",
// "/opt/...") is "dir/opt/..."), so the file was never found: "file not found beside ... or in
// the include directories", though it was there.
func TestAbsoluteInclude(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "inc", "Base.tars")
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, []byte("module Base { struct P { 0 optional int x; }; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "#include \"" + filepath.ToSlash(base) + "\"\nmodule App { struct S { 0 optional Base::P p; }; };\n"
	if _, err := LoadSource(filepath.Join(dir, "app", "App.tars"), src, nil); err != nil {
		t.Fatalf("#include of an absolute path that exists: %v", err)
	}
}
