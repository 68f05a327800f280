package devregistry_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/devregistry"
)

// TestUnquotedObjectName: a registry.toml whose object name is written unquoted, as TOML keys
// usually are (Hello.GreeterServer.GreeterObj = [...], which TOML reads as nested tables), is
// refused with an error that says to quote the name, and how. Before, it got only the decoder's
// words: "toml: (last key "objects.Hello"): incompatible types: TOML value has type
// map[string]any; destination has type slice" (found by a review following the docs).
func TestUnquotedObjectName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, "[objects]\nHello.GreeterServer.GreeterObj = [\"tcp -h 127.0.0.1 -p 18020\"]\n")
	r, err := devregistry.Start(devregistry.Options{File: path})
	if err == nil {
		within(t, "registry Close", r.Close)
		t.Fatal("a file with an unquoted object name was accepted")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), `quote it, "Hello.GreeterServer.GreeterObj" = [...]`) {
		t.Errorf("err = %q; want it to say to quote the object name: \"Hello.GreeterServer.GreeterObj\" = [...]", err)
	}
}
