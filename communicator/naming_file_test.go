package communicator_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/file"
	"github.com/tarscomm/tarscomm/servantproxy"
)

func writeNaming(t *testing.T, path string, gs ...*greeter) {
	t.Helper()
	data := "# test naming file\n"
	for _, g := range gs {
		data += servant + "@" + g.endpoint() + "\n"
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestNamingFile: a naming file from the TOML config resolves a bare object, and changes to it
// are followed within a second while calls run; when every endpoint leaves, new calls fail at
// once with ErrNoEndpoint, and come back when one returns.
func TestNamingFile(t *testing.T) {
	a, b := startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{})
	path := filepath.Join(t.TempDir(), "naming.txt")
	writeNaming(t, path, a)
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 2; c.NamingFile = path })
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	call := func() (string, error) { return sayHello(ctx, sp, "f", 1) }
	followsWithin(t, sp, call, map[string]bool{"a": true}, time.Second)

	// Callers keep calling while the file changes: none fails.
	var stop atomic.Bool
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				if _, err := sayHello(ctx, sp, "bg", 2); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	writeNaming(t, path, a, b)
	followsWithin(t, sp, call, map[string]bool{"b": true}, 1500*time.Millisecond)
	writeNaming(t, path, b)
	followsWithin(t, sp, call, map[string]bool{"b": true}, 1500*time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d calls failed while the list changed", n)
	}

	// Every endpoint leaves: new calls fail at once, with ErrNoEndpoint.
	writeNaming(t, path)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for {
		start := time.Now()
		_, err := sayHello(ctx, sp, "gone", 3)
		if err != nil {
			if !errors.Is(err, communicator.ErrNoEndpoint) {
				t.Fatalf("with no endpoint left: err = %v, want ErrNoEndpoint", err)
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Fatalf("ErrNoEndpoint took %v", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("calls still succeed after every endpoint left the file")
		}
	}
	writeNaming(t, path, a)
	deadline = time.Now().Add(1500 * time.Millisecond)
	for {
		from, err := call()
		if err == nil && from == "a" {
			break
		}
		if err != nil && !errors.Is(err, communicator.ErrNoEndpoint) {
			t.Fatalf("while a comes back: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a did not come back within 1.5s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pushSource is a naming.Source driven by the test.
type pushSource struct {
	mu    sync.Mutex
	push  func(naming.List)
	ready chan struct{}
}

func (s *pushSource) Watch(_ naming.Query, push func(naming.List)) func() {
	s.mu.Lock()
	s.push = push
	s.mu.Unlock()
	close(s.ready)
	return func() {
		s.mu.Lock()
		s.push = nil
		s.mu.Unlock()
	}
}

func (s *pushSource) send(gs ...*greeter) {
	var l naming.List
	for _, g := range gs {
		e, _ := endpoint.ParseEndpoint(g.endpoint())
		l.Active = append(l.Active, e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.push != nil {
		s.push(l)
	}
}

// TestNamingLeavingEndpointFinishesCalls: an endpoint that leaves while a call waits on it gets
// no new call, its waiting call completes with its reply, and its connection closes after.
func TestNamingLeavingEndpointFinishesCalls(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{block: true})
	b := startGreeter(t, "b", serverOpt{})
	src := &pushSource{ready: make(chan struct{})}
	cfg := conf.Default()
	c, err := communicator.New(cfg, communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closeComm(t, c) }()
	sp, err := c.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	done := make(chan error, 1)
	go func() {
		from, err := sayHello(ctx, sp, "slow", 1)
		if err == nil && from != "a" {
			err = errors.New("answered by " + from)
		}
		done <- err
	}()
	<-src.ready
	src.send(a)
	time.Sleep(200 * time.Millisecond) // the call is now waiting on a
	src.send(b)
	time.Sleep(50 * time.Millisecond) // the update reaches the net thread
	for i := range 20 {
		if from, err := sayHello(ctx, sp, "new", uint64(i)); err != nil || from != "b" {
			t.Fatalf("call after a left: from %q, %v; want b", from, err)
		}
	}
	close(a.release)
	if err := <-done; err != nil {
		t.Fatalf("the call in flight on the endpoint that left: %v", err)
	}
}

// TestProxyIdentity: proxies are keyed by the whole proxy string, so a second string for a known
// object with other endpoints gets those endpoints.
func TestProxyIdentity(t *testing.T) {
	a, b := startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{})
	comm := newComm(t, nil)
	spA, err := comm.Proxy(servant + "@" + a.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	spB, err := comm.Proxy(servant + "@" + b.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	spA2, err := comm.Proxy(servant + "@  " + a.endpoint() + " ")
	if err != nil {
		t.Fatal(err)
	}
	if spA2.Target().String() != spA.Target().String() {
		t.Fatalf("same proxy string, different proxies: %v, %v", spA2.Target(), spA.Target())
	}
	ctx := testCtx(t)
	if from, err := sayHello(ctx, spA, "i", 1); err != nil || from != "a" {
		t.Fatalf("first proxy: %q, %v", from, err)
	}
	if from, err := sayHello(ctx, spB, "i", 2); err != nil || from != "b" {
		t.Fatalf("second proxy with other endpoints: %q, %v; want b", from, err)
	}
}

// TestHashBalancerSpreadsUnhashedCalls: with load-balance = hash or consistenthash, calls without
// a hash code go round robin (as in TarsCpp), and hashed calls keep their endpoint.
func TestHashBalancerSpreadsUnhashedCalls(t *testing.T) {
	a, b, c := startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{}), startGreeter(t, "c", serverOpt{})
	for _, lb := range []string{"hash", "consistenthash"} {
		comm := newComm(t, func(cfg *conf.Config) { cfg.LoadBalance = lb })
		sp := proxyTo(t, comm, a, b, c)
		ctx := testCtx(t)
		seen := map[string]int{}
		for i := range 30 {
			from, err := sayHello(ctx, sp, "u", uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			seen[from]++
		}
		if len(seen) != 3 {
			t.Errorf("%s: unhashed calls reached %v, want all three endpoints", lb, seen)
		}
		first := ""
		for i := range 10 {
			from, err := sayHello(ctx, sp, "h", uint64(i), servantproxy.WithHash(12345))
			if err != nil {
				t.Fatal(err)
			}
			if first == "" {
				first = from
			} else if from != first {
				t.Errorf("%s: hashed calls reached %s and %s", lb, first, from)
			}
		}
	}
}

// TestNamingFileSource uses the file source from code.
func TestNamingFileSource(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	path := filepath.Join(t.TempDir(), "n.txt")
	writeNaming(t, path, a)
	src := file.New(path, nil)
	defer src.Close()
	c, err := communicator.New(conf.Default(), communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closeComm(t, c) }()
	sp, err := c.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(testCtx(t), sp, "x", 1); err != nil || from != "a" {
		t.Fatalf("from %q, %v", from, err)
	}
	other, err := c.Proxy("Other.Server.Obj")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.InvokeRaw(testCtx(t), "f", nil); !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Fatalf("object not in the file: %v, want ErrNoEndpoint", err)
	}
}
