package registry_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
)

// TestSharedCacheFileKeepsOtherEntries: the cache's entries are keyed by the locator so that one
// file can serve several registries. Two Registries sharing the file each keep the other's
// entries when they rewrite it; each used to rewrite it whole from what it read first, losing
// the other's entries written since, so that a later start without that registry had no cache.
func TestSharedCacheFileKeepsOtherEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "endpoints.json")
	qs1 := startQueryServer(t, ok(1001), ok(1002))
	qs2 := startQueryServer(t, ok(2001))
	r1 := registry.New(queryProxy(t, qs1.locator()), registry.Options{Refresh: hour, Cache: path, Locator: qs1.locator(), Log: zaptest.NewLogger(t)})
	r2 := registry.New(queryProxy(t, qs2.locator()), registry.Options{Refresh: hour, Cache: path, Locator: qs2.locator(), Log: zaptest.NewLogger(t)})

	follow := func(r *registry.Registry, obj, want string) {
		t.Helper()
		ev := newEvents()
		stop := r.WatchReporting(naming.Query{Object: obj}, ev.push, ev.fail)
		got, _ := ev.waitFor(t, 1) // the cache is written before the push
		stop()
		if got[0] != want {
			t.Fatalf("%s: %v, want %q", obj, got, want)
		}
	}
	follow(r1, "A.B.One", "push tcp:1001") // file: {1|One}
	follow(r2, "A.B.Two", "push tcp:2001") // file: {1|One, 2|Two}
	follow(r1, "A.B.One", "push tcp:1002") // One changed: the file is rewritten

	// Registry 2 is gone: a new client of it starts from the cache.
	qs2.stop()
	cold := registry.New(queryProxy(t, qs2.locator()), registry.Options{FailRetry: hour, Cache: path, Locator: qs2.locator(), Log: zaptest.NewLogger(t)})
	ev := newEvents()
	stop := cold.WatchReporting(naming.Query{Object: "A.B.Two"}, ev.push, ev.fail)
	ev.waitFor(t, 1)
	// The cache is read in the turn that reported the failure; stop waits for that turn to end.
	stop()
	got, _ := ev.snapshot()
	if len(got) != 2 || got[1] != "push tcp:2001" {
		t.Fatalf("a start without registry 2: events %v, want [fail, push tcp:2001] from the cache; the entry of registry 2 was lost when registry 1 rewrote the shared file", got)
	}
}
