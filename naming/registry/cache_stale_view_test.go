package registry_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
)

// TestCacheLoadSeesFileWrittenByAnother: two Registries of the same locator share the cache
// file (two Communicators of one configuration, or two processes: the cache's doc says several
// may share it). r1 has read the file once (when it cached A.B.One); r2 then caches A.B.Two in
// the file. The registry goes down and r1 is asked for A.B.Two: the file holds its last good
// answer, and r1 reads it again since it changed. Before, r1 looked it up in the copy it had read
// before r2 wrote, and found nothing: the watch reported the failure and pushed no list, so the
// servant's calls waited for a registry that was down.
func TestCacheLoadSeesFileWrittenByAnother(t *testing.T) {
	path := filepath.Join(t.TempDir(), "endpoints.json")
	qs := startQueryServer(t, ok(1001))
	q := queryProxy(t, qs.locator())
	opts := registry.Options{Refresh: hour, FailRetry: hour, SlowFailRetry: hour, Cache: path, Locator: qs.locator(), Log: zaptest.NewLogger(t)}
	r1 := registry.New(q, opts)
	r2 := registry.New(q, opts)

	follow := func(r *registry.Registry, obj string) []string {
		t.Helper()
		ev := newEvents()
		stop := r.WatchReporting(naming.Query{Object: obj}, ev.push, ev.fail)
		ev.waitFor(t, 1)
		stop() // waits for the turn that produced the event (and its cache read) to end
		got, _ := ev.snapshot()
		return got
	}
	if got := follow(r1, "A.B.One"); got[0] != "push tcp:1001" {
		t.Fatalf("r1 A.B.One: %v", got)
	}
	if got := follow(r2, "A.B.Two"); got[0] != "push tcp:1001" { // the file now holds One and Two
		t.Fatalf("r2 A.B.Two: %v", got)
	}
	qs.stop()
	got := follow(r1, "A.B.Two")
	if len(got) == 0 || got[0] != "push tcp:1001" {
		t.Fatalf("registry down, the cache file holds A.B.Two (written by r2): r1's watch of A.B.Two gave %v; "+
			"want the file's list first (r1 read its stale in-memory copy of the file)", got)
	}
}
