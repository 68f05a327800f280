package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
)

// TestCacheWriteRetried: the endpoint cache's directory does not exist when the first answer
// comes (not created yet, a volume mounted late), so writing the cache fails and is logged. The
// directory then appears while the registry keeps answering the same list: one of those answers
// writes the cache. store used to record the entry in its copy before writing, so every later
// identical answer compared equal and nothing was written again: a restart while the registry
// was down found no cache.
func TestCacheWriteRetried(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	path := filepath.Join(dir, "endpoints.json")
	qs := startQueryServer(t, ok(1))
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{
		Refresh: 20 * time.Millisecond, Cache: path, Locator: qs.locator(), Log: zaptest.NewLogger(t),
	})
	ev := newEvents()
	stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
	defer stop()
	ev.waitFor(t, 1) // the first answer: the cache write failed (no directory)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "-p 1") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the cache directory exists and the registry answered tcp:1 every 20ms for 5s (%d queries), "+
		"but the cache file was never written: a failed write is never tried again while the list stays the same",
		len(qs.queries()))
}

// TestCacheDirLeavesNoTempFiles: endpoint-cache names a path that is a directory (a
// misconfiguration, or a volume mounted at the file's path). A write that fails to rename its
// temporary file over it removes the temporary file; it used to be left behind, one more stray
// file per list change.
func TestCacheDirLeavesNoTempFiles(t *testing.T) {
	parent := t.TempDir()
	path := filepath.Join(parent, "endpoints.json")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	qs := startQueryServer(t, ok(1), ok(2), ok(3))
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{
		Refresh: 10 * time.Millisecond, Cache: path, Locator: qs.locator(), Log: zaptest.NewLogger(t),
	})
	ev := newEvents()
	stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
	ev.waitFor(t, 3) // three lists, three cache writes tried (before each push)
	stop()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var stray []string
	for _, e := range entries {
		if e.Name() != "endpoints.json" {
			stray = append(stray, e.Name())
		}
	}
	if len(stray) > 0 {
		t.Fatalf("after 3 failed cache writes the cache's directory holds %d stray files %v: each failed rename leaves its temporary file", len(stray), stray)
	}
}
