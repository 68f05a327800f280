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

	// follow watches obj until its n-th event (the cache's list first, if it has one; then the
	// registry's answer), which must be want.
	follow := func(r *registry.Registry, obj string, n int, want string) {
		t.Helper()
		ev := newEvents()
		stop := r.WatchReporting(naming.Query{Object: obj}, ev.push, ev.fail)
		got, _ := ev.waitFor(t, n) // the cache is written before the push
		stop()
		if got[n-1] != want {
			t.Fatalf("%s: %v, want %q last", obj, got, want)
		}
	}
	follow(r1, "A.B.One", 1, "push tcp:1001") // file: {1|One}
	follow(r2, "A.B.Two", 1, "push tcp:2001") // file: {1|One, 2|Two}
	follow(r1, "A.B.One", 2, "push tcp:1002") // the cache's 1001, then 1002: the file is rewritten

	// Registry 2 is gone: a new client of it starts from the cache.
	qs2.stop()
	cold := registry.New(queryProxy(t, qs2.locator()), registry.Options{FailRetry: hour, Cache: path, Locator: qs2.locator(), Log: zaptest.NewLogger(t)})
	ev := newEvents()
	stop := cold.WatchReporting(naming.Query{Object: "A.B.Two"}, ev.push, ev.fail)
	ev.waitFor(t, 2)
	stop()
	got, _ := ev.snapshot()
	if len(got) != 2 || got[0] != "push tcp:2001" {
		t.Fatalf("a start without registry 2: events %v, want [push tcp:2001, fail]: the cache first; the entry of registry 2 was lost when registry 1 rewrote the shared file", got)
	}
}
