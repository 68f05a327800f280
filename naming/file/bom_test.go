package file

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/naming"
)

// TestBOMFileResolves: a naming file saved with a UTF-8 byte order mark (Windows Notepad,
// PowerShell 5's Out-File, many editors' "UTF-8 with BOM") was accepted by Open, but the mark
// became part of the first line's object name ("\ufeffA"), which no proxy string names: the
// object on the first line silently had no endpoint (its calls failed with ErrNoEndpoint). Parse
// now skips the mark (refusing the file would also do: the user would be told).
func TestBOMFileResolves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "naming.txt")
	if err := os.WriteFile(path, []byte("\ufeffA@tcp -h 127.0.0.1 -p 40123\nB@tcp -h 127.0.0.1 -p 40124\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, nil)
	if err != nil {
		t.Logf("Open refused the file: %v", err) // acceptable: the user is told
		return
	}
	defer s.Close()
	rec := newRecorder()
	stop := s.Watch(naming.Query{Object: "A"}, rec.push)
	defer stop()
	select {
	case <-rec.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no list for A within 10s")
	}
	ls, _ := rec.snapshot()
	if got := ports(ls[len(ls)-1]); len(got) != 1 || got[0] != 40123 {
		t.Fatalf("Open accepted a naming file starting with a byte order mark, and object A (its first line) got endpoints %v, want [40123]", got)
	}
}
