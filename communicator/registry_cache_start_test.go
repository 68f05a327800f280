package communicator_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
)

// cachedClient runs a first Communicator against reg (which lists a) with the endpoint
// cache at path, makes one call so that the answer is cached, and closes it.
func cachedClient(t *testing.T, reg *testRegistry, a *greeter, path string) func(*conf.Config) {
	t.Helper()
	reg.set([]*greeter{a})
	edit := registryConf(reg, func(c *conf.Config) { c.EndpointCache = path })
	comm := newComm(t, edit)
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(testCtx(t), sp, "warm", 1); err != nil || from != "a" {
		t.Fatalf("warm-up call: from %q, %v", from, err)
	}
	_ = closeComm(t, comm)
	return edit
}

// TestRegistryEmptyAnswerAtStartKeepsCache: the cache file lists a (the last good answer);
// a new client starts while the registry answers the object with an empty active list (e.g. its
// servers' node agent stopped heartbeating, so they are all marked inactive). TarsCpp loads the
// cache when the proxy is made (QueryEpBase::setObjName -> loadFromCache) and never replaces a
// list with an empty active list (doEndpoints returns early), so its calls go to a, as they do
// here now. Before, tarscomm read the cache only after a failed query, and pushed the empty
// answer first: every call failed with ErrNoEndpoint although the cache named a live server.
func TestRegistryEmptyAnswerAtStartKeepsCache(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	reg := startRegistry(t, "")
	path := filepath.Join(t.TempDir(), "endpoints.json")
	edit := cachedClient(t, reg, a, path)

	reg.set(nil) // the registry answers 0 with no active endpoint
	comm := newComm(t, edit)
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	from, err := sayHello(ctx, sp, "c", 2)
	if err != nil || from != "a" {
		t.Fatalf("registry answers an empty active list, cache lists a: call got from %q, err %v; "+
			"want it answered by a from the cache (TarsCpp loads the cache at start and keeps a list on an empty active answer)", from, err)
	}
}

// TestRegistrySlowAtStartUsesCache: the cache file lists a; a new client starts while the
// registry accepts the query but does not answer (overloaded). TarsCpp has the cached list from
// the moment the proxy is made, so a call with a 1s deadline goes to a, as it does here now.
// Before, tarscomm waited for the query to fail (QueryTimeout, 5s) before it read the cache: the
// call timed out.
func TestRegistrySlowAtStartUsesCache(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	reg := startRegistry(t, "")
	path := filepath.Join(t.TempDir(), "endpoints.json")
	edit := cachedClient(t, reg, a, path)

	hold := make(chan struct{})
	reg.mu.Lock()
	reg.hold = hold
	reg.mu.Unlock()
	t.Cleanup(func() { close(hold) }) // before the registry's stop (Cleanups run last first)
	comm := newComm(t, edit)
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	from, err := sayHello(ctx, sp, "c", 2)
	if err != nil || from != "a" {
		t.Fatalf("registry silent (5s query timeout), cache lists a: a call with a 1s deadline got from %q, err %v; "+
			"want it answered by a from the cache, as TarsCpp's proxy has the cached list from the start", from, err)
	}
}
