package registry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
)

// TestCorruptCacheAtStart guards the endpoint cache read at start when the file is cut,
// not JSON, or JSON of another shape: with the registry down the watch is told each failure and
// gets no list (nothing made up from the broken file); with the registry up it gets the
// registry's list and the file is rewritten as a valid cache holding it. (No other test starts
// from a broken cache file.)
func TestCorruptCacheAtStart(t *testing.T) {
	for name, content := range map[string]string{
		"cut":         `{"tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p 1|A.B.C": {"active": ["tcp -h 127.0.0.1 -p 7"`,
		"binary":      "\x00\xff\xfe garbage",
		"other shape": `[{"active": ["tcp -h 127.0.0.1 -p 7"]}]`,
		"wrong types": `{"x": {"active": "tcp -h 127.0.0.1 -p 7"}}`,
	} {
		t.Run(name+"/registry down", func(t *testing.T) {
			qs := startQueryServer(t, ok(1))
			loc := qs.locator()
			qs.stop()
			path := filepath.Join(t.TempDir(), "endpoints.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			r := registry.New(queryProxy(t, loc), registry.Options{
				FailRetry: 20 * time.Millisecond, SlowFailRetry: 20 * time.Millisecond, QueryTimeout: time.Second,
				Cache: path, Locator: loc, Log: zaptest.NewLogger(t),
			})
			ev := newEvents()
			stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
			got, _ := ev.waitFor(t, 3)
			stop()
			for _, e := range got {
				if e != "fail" {
					t.Fatalf("events %v; want only failures (the registry is down and the cache is broken)", got)
				}
			}
		})
		t.Run(name+"/registry up", func(t *testing.T) {
			qs := startQueryServer(t, ok(2))
			path := filepath.Join(t.TempDir(), "endpoints.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			r := registry.New(queryProxy(t, qs.locator()), registry.Options{
				Refresh: time.Hour, Cache: path, Locator: qs.locator(), Log: zaptest.NewLogger(t),
			})
			ev := newEvents()
			stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
			got, _ := ev.waitFor(t, 1)
			stop()
			if got[0] != "push tcp:2" {
				t.Fatalf("events %v; want the registry's list first", got)
			}
			data, err := os.ReadFile(path)
			var m map[string]struct{ Active []string }
			if err == nil {
				err = json.Unmarshal(data, &m)
			}
			if err != nil || len(m) != 1 || !strings.Contains(string(data), "-p 2") {
				t.Fatalf("cache file after the answer: %q, %v; want a valid cache of the one list", data, err)
			}
		})
	}
}
