package communicator_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/server"
)

// testRegistry is a TARS registry for tests: QueryF served by the project's server, answering
// from lists the test sets, and recording what it was asked.
type testRegistry struct {
	queryf.UnimplementedQueryFServer
	srv  *server.Server
	addr string

	mu       sync.Mutex
	active   []endpointf.EndpointF
	inactive []endpointf.EndpointF
	fail     bool
	hold     chan struct{} // when set, queries wait for it to close
	asked    []string      // "group obj" or "set obj set"
}

func startRegistry(t *testing.T, addr string) *testRegistry {
	t.Helper()
	r := &testRegistry{}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("registry")), server.WithNumEventLoop(1))
	if err := queryf.RegisterQueryF(s, "tars.tarsregistry.QueryObj", r); err != nil {
		t.Fatal(err)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	a, err := s.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	r.srv, r.addr = s, a.String()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *testRegistry) stop(t testing.TB) { _ = stopServer(t, "registry", r.srv) }

func (r *testRegistry) locator() string {
	host, port, _ := net.SplitHostPort(r.addr)
	return "tars.tarsregistry.QueryObj@tcp -h " + host + " -p " + port
}

// set makes the registry answer with gs active and in inactive.
func (r *testRegistry) set(active []*greeter, inactive ...*greeter) {
	conv := func(gs []*greeter) []endpointf.EndpointF {
		out := []endpointf.EndpointF{}
		for _, g := range gs {
			e, err := endpoint.ParseEndpoint(g.endpoint())
			if err != nil {
				panic(err)
			}
			out = append(out, registry.ToEndpointF(e))
		}
		return out
	}
	r.mu.Lock()
	r.active, r.inactive = conv(active), conv(inactive)
	r.mu.Unlock()
}

func (r *testRegistry) answer(cur *server.Current, what string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	r.mu.Lock()
	if ownCaller(cur) {
		r.asked = append(r.asked, what)
	}
	hold, fail := r.hold, r.fail
	a, in := r.active, r.inactive
	r.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if fail {
		return -1, nil, nil, nil
	}
	return 0, a, in, nil
}

func (r *testRegistry) FindObjectByIdInSameGroup(_ context.Context, cur *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return r.answer(cur, "group "+id)
}

func (r *testRegistry) FindObjectByIdInSameSet(_ context.Context, cur *server.Current, id, set string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return r.answer(cur, "set "+id+" "+set)
}

func (r *testRegistry) queries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// registryConf configures a client on reg with a 1s refresh.
func registryConf(reg *testRegistry, edit func(*conf.Config)) func(*conf.Config) {
	return func(c *conf.Config) {
		c.NetThread = 2
		c.Locator = reg.locator()
		c.RefreshEndpointInterval = time.Second
		if edit != nil {
			edit(c)
		}
	}
}

// followsWithin calls until a reply comes from want's only member, or 20 replies in a row come
// from want's members; it fails the test if that takes longer than within or a call fails.
func followsWithin(t *testing.T, sp interface {
	Name() string
}, call func() (string, error), want map[string]bool, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	streak := 0
	for time.Now().Before(deadline) {
		from, err := call()
		if err != nil {
			t.Fatalf("call failed during the change: %v", err)
		}
		if want[from] {
			streak++
			if streak >= 20 || len(want) == 1 {
				return
			}
		} else {
			streak = 0
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("traffic of %s did not move to %v within %v", sp.Name(), want, within)
}

// TestRegistryFollowsChanges: a bare object is resolved through the registry; calls made before
// the first answer wait for it; added, removed and killed endpoints are followed within one
// refresh interval plus a second, and every call succeeds.
func TestRegistryFollowsChanges(t *testing.T) {
	a, b, c := startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{}), startGreeter(t, "c", serverOpt{})
	reg := startRegistry(t, "")
	reg.set([]*greeter{a})
	hold := make(chan struct{})
	reg.mu.Lock()
	reg.hold = hold
	reg.mu.Unlock()
	comm := newComm(t, registryConf(reg, nil))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	// Calls before the answer wait for it.
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := sayHello(ctx, sp, "early", uint64(i))
			errs <- err
		})
	}
	time.Sleep(200 * time.Millisecond)
	reg.mu.Lock()
	reg.hold = nil
	reg.mu.Unlock()
	close(hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("call made before the registry answered: %v", err)
		}
	}
	call := func() (string, error) { return sayHello(ctx, sp, "x", 1) }
	followsWithin(t, sp, call, map[string]bool{"a": true}, time.Second)

	reg.set([]*greeter{a, b})
	followsWithin(t, sp, call, map[string]bool{"b": true}, 2*time.Second)
	seen := map[string]bool{}
	for range 20 {
		from, err := call()
		if err != nil {
			t.Fatal(err)
		}
		seen[from] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("after adding b, calls reached %v, want a and b", seen)
	}

	reg.set([]*greeter{b, c})
	followsWithin(t, sp, call, map[string]bool{"b": true, "c": true}, 2*time.Second)

	// The registry fails and then stops: the last list stays.
	reg.mu.Lock()
	reg.fail = true
	reg.mu.Unlock()
	time.Sleep(1500 * time.Millisecond)
	reg.stop(t)
	for i := range 20 {
		if _, err := sayHello(ctx, sp, "x", uint64(i)); err != nil {
			t.Fatalf("call with the registry down: %v", err)
		}
	}
	if q := reg.queries(); len(q) < 3 || q[0] != "group "+servant {
		t.Fatalf("registry was asked %v, want findObjectByIdInSameGroup(%s) repeatedly", q, servant)
	}
}

// TestRegistrySet: with set routing on, the registry is asked InSameSet with the client's set,
// and calls carry the set (message type 0x80, STATUS_SETNAME_VALUE).
func TestRegistrySet(t *testing.T) {
	seen := make(chan *server.Current, 64)
	a := startGreeter(t, "a", serverOpt{seen: seen})
	reg := startRegistry(t, "")
	reg.set([]*greeter{a})
	comm := newComm(t, registryConf(reg, func(c *conf.Config) {
		c.EnableSet = true
		c.SetDivision = "app.sz.1"
	}))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), sp, "s", 1); err != nil {
		t.Fatal(err)
	}
	cur := <-seen
	if cur.MessageType&0x80 == 0 || cur.Status["STATUS_SETNAME_VALUE"] != "app.sz.1" {
		t.Fatalf("set call arrived with message type %#x, status %v", cur.MessageType, cur.Status)
	}
	if q := reg.queries(); len(q) == 0 || q[0] != "set "+servant+" app.sz.1" {
		t.Fatalf("registry was asked %v, want findObjectByIdInSameSet(%s, app.sz.1)", q, servant)
	}
	// An explicit set for one proxy.
	sp2, err := comm.ProxyWithSet(servant, "app.sh.2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), sp2, "s", 2); err != nil {
		t.Fatal(err)
	}
	for cur := range seen {
		if cur.Status["STATUS_SETNAME_VALUE"] == "app.sh.2" {
			break
		}
	}
	if _, err := comm.ProxyWithSet(servant, "*.sh.2"); err == nil {
		t.Fatal("set *.sh.2 accepted")
	}
}

// TestRegistryEndpointCache: the last good answer is written to the cache file, and a client
// started while the registry is down uses it.
func TestRegistryEndpointCache(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	reg := startRegistry(t, "")
	reg.set([]*greeter{a})
	path := filepath.Join(t.TempDir(), "endpoints.json")
	edit := registryConf(reg, func(c *conf.Config) { c.EndpointCache = path })
	comm := newComm(t, edit)
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), sp, "c", 1); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), a.endpoint()) {
		t.Fatalf("cache file: %q, %v; want it to list %s", data, err, a.endpoint())
	}
	_ = closeComm(t, comm)
	reg.stop(t)

	comm2 := newComm(t, edit)
	sp2, err := comm2.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(testCtx(t), sp2, "c", 2); err != nil || from != "a" {
		t.Fatalf("call with the registry down and a cache: from %q, %v", from, err)
	}
}

// TestRegistryUnreachableWaitsDeadline: with no registry and no cache, a call waits for the
// first list until its own deadline, not longer, and fails with a timeout.
func TestRegistryUnreachableWaitsDeadline(t *testing.T) {
	reg := startRegistry(t, "")
	reg.stop(t)
	comm := newComm(t, registryConf(reg, nil))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = sayHello(ctx, sp, "w", 1)
	took := time.Since(start)
	if !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if took < 250*time.Millisecond {
		t.Fatalf("call ended after %v, before its 300ms deadline", took)
	}
	within(t, "the call with a 300ms deadline", took, 2*time.Second)
}
