package devregistry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// reviewStart starts a Registry over path whose reload goroutine never ticks during the test
// (Reload an hour), so that the test drives the reloads itself with load(true), one read each, as
// the goroutine would every second.
func reviewStart(t *testing.T, path string) *Registry {
	t.Helper()
	r, err := Start(Options{File: path, Reload: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return r
}

func reviewPorts(r *Registry, obj string) []int {
	var out []int
	for _, e := range r.Lookup(obj).Active {
		out = append(out, e.Port)
	}
	return out
}

// TestSettleEmptyRead: a TOML file rewritten in place is first truncated; one reload that reads
// it empty is not applied ("a new content is applied once two reads in a row returned it"). It
// was, as pending started nil and bytes.Equal(nil, []byte{}) is true: the registry then served no
// endpoint at all until the file settled again.
func TestSettleEmptyRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	full := "[objects]\n\"App.S.Obj\" = [\"tcp -h 127.0.0.1 -p 9000\"]\n"
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	r := reviewStart(t, path)
	if got := reviewPorts(r, "App.S.Obj"); len(got) != 1 {
		t.Fatalf("at start: %v", got)
	}
	// An in-place rewrite (O_TRUNC, then write) caught between its two steps.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.load(true); err != nil {
		t.Fatal(err)
	}
	if got := reviewPorts(r, "App.S.Obj"); len(got) != 1 {
		t.Fatalf("after ONE read of a truncated file the registry serves %v for App.S.Obj, want [9000]: the empty content was applied without settling", got)
	}
}

// TestSettleForgetsStalePending: a half-written content seen once during an in-place rewrite of
// the same content is forgotten when the next read returns the content applied; it was kept, and
// the next time an in-place rewrite was caught at the same point that half was applied after one
// read.
func TestSettleForgetsStalePending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	half := "[objects]\n\"App.S.A\" = [\"tcp -h 127.0.0.1 -p 9000\"]\n"
	full := half + "\"App.S.B\" = [\"tcp -h 127.0.0.1 -p 9001\"]\n"
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(full)
	r := reviewStart(t, path)
	reload := func() {
		t.Helper()
		if err := r.load(true); err != nil {
			t.Fatal(err)
		}
	}
	// The same content rewritten in place (a config tool's run, an editor's save): one reload
	// catches it half written, the next sees it whole again.
	write(half)
	reload()
	write(full)
	reload()
	if got := reviewPorts(r, "App.S.B"); len(got) != 1 {
		t.Fatalf("B after the rewrite settled: %v", got)
	}
	// Later, another in-place rewrite caught at the same point: one read only.
	write(half)
	reload()
	if got := reviewPorts(r, "App.S.B"); len(got) != 1 {
		t.Fatalf("after ONE read of a half-written file App.S.B is served %v, want [9001]: a stale pending content was applied without settling", got)
	}
}
