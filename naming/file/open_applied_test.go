package file

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tarscomm/tarscomm/naming"
)

// TestOpenAppliesAtOnce: a file that Open accepted is in force when Open returns, so a watch
// made then gets its list before Watch returns. Before, Open's read only checked the file, New's
// read was the first of the two a content needs, and the list came with the first poll, a
// quarter second later: a call made at start with a shorter deadline failed with no endpoint.
func TestOpenAppliesAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "naming.txt")
	if err := os.WriteFile(path, []byte("A@tcp -h 127.0.0.1 -p 40123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := newRecorder()
	stop := s.Watch(naming.Query{Object: "A"}, rec.push)
	defer stop()
	ls, _ := rec.snapshot()
	if len(ls) != 1 || len(ports(ls[0])) != 1 || ports(ls[0])[0] != 40123 {
		t.Fatalf("lists pushed before Watch returned: %v, want one with port 40123", ls)
	}
}
