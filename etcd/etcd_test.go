package etcd_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/etcd"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
)

func mustEndpoint(t *testing.T, s string) endpoint.Endpoint {
	t.Helper()
	ep, err := endpoint.ParseEndpoint(s)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func register(t *testing.T, cli *clientv3.Client, g *greeter, ttl time.Duration) *etcd.Registration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := etcd.Register(ctx, cli, prefix, servant, mustEndpoint(t, g.endpoint()), ttl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Deregister(context.Background()) })
	return r
}

// movesTo waits until 20 calls in a row are answered by servers in want, failing the test if a
// call fails or if that takes longer than within; it returns how long it took.
func movesTo(t *testing.T, sp *servantproxy.ServantProxy, want map[string]bool, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	streak := 0
	for seq := uint64(0); time.Since(start) < within; seq++ {
		from, err := sayHello(context.Background(), sp, "probe", seq)
		if err != nil {
			t.Fatalf("call failed while waiting for %v: %v", want, err)
		}
		if want[from] {
			if streak++; streak >= 20 {
				return time.Since(start)
			}
		} else {
			streak = 0
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("traffic did not move to %v within %v", want, within)
	return 0
}

// reaches waits until a call is answered by id.
func reaches(t *testing.T, sp *servantproxy.ServantProxy, id string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for seq := uint64(0); time.Since(start) < within; seq++ {
		from, err := sayHello(context.Background(), sp, "probe", seq)
		if err != nil {
			t.Fatalf("call failed while waiting for %s: %v", id, err)
		}
		if from == id {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no call reached %s within %v", id, within)
	return 0
}

// TestFollowsEtcd: a Communicator whose naming source is etcd follows endpoints registered,
// deregistered and expired (their server's etcd client gone, so the lease is not renewed) while
// callers run, and none of their calls fails; when every endpoint has left, new calls fail at
// once with ErrNoEndpoint, and a key put by hand brings traffic back.
func TestFollowsEtcd(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	a, b, c := startGreeter(t, "a"), startGreeter(t, "b"), startGreeter(t, "c")
	const ttl = 2 * time.Second
	regA := register(t, cli, a, ttl)

	src := etcd.New(cli, prefix, etcd.WithLogger(zaptest.NewLogger(t).Named("etcd-naming")))
	cfg := conf.Default()
	cfg.NetThread = 2
	comm, err := communicator.New(cfg, communicator.WithNaming(src), communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) }()
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(context.Background(), sp, "first", 1); err != nil || from != "a" {
		t.Fatalf("first call: from %q, %v; want a", from, err)
	}

	// Callers run through every change below; none of their calls may fail.
	var stop atomic.Bool
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for seq := uint64(0); !stop.Load(); seq++ {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				_, err := sayHello(ctx, sp, "bg", seq*4+uint64(i))
				cancel()
				calls.Add(1)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}

	// Added: b registers through a client of its own (so that it can "die" below).
	cliB := newClient(t, es)
	register(t, cliB, b, ttl)
	t.Logf("b added: reached after %v", reaches(t, sp, "b", 2*time.Second))

	// Removed: a deregisters (a graceful stop).
	if err := regA.Deregister(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("a removed: traffic on {b} after %v", movesTo(t, sp, map[string]bool{"b": true}, 2*time.Second))

	register(t, cli, c, ttl)
	t.Logf("c added: reached after %v", reaches(t, sp, "c", 2*time.Second))

	// Expired: b's process "dies": its etcd client closes without deregistering, the lease is
	// no longer renewed and etcd deletes the key within the TTL. b's server still answers, so
	// calls sent to it until then succeed.
	_ = cliB.Close()
	d := movesTo(t, sp, map[string]bool{"c": true}, ttl+3*time.Second)
	t.Logf("b expired: traffic on {c} after %v (ttl %v)", d, ttl)

	stop.Store(true)
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed while the list changed; first: %v", n, calls.Load(), firstErr.Load())
	}
	t.Logf("%d background calls, none failed", calls.Load())

	// Every endpoint leaves: new calls fail at once with ErrNoEndpoint.
	if err := etcdDeregisterAll(cli); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for seq := uint64(0); ; seq++ {
		start := time.Now()
		_, err := sayHello(context.Background(), sp, "gone", seq)
		if err != nil {
			if !errors.Is(err, communicator.ErrNoEndpoint) {
				t.Fatalf("with no endpoint left: %v, want ErrNoEndpoint", err)
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Fatalf("ErrNoEndpoint took %v", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("calls still succeed 2s after every endpoint left")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A key put by hand (no lease), in the documented layout, brings a back.
	key := etcd.Key(prefix, servant, mustEndpoint(t, a.endpoint()))
	if _, err := cli.Put(context.Background(), key, a.endpoint()); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(2 * time.Second)
	for seq := uint64(0); ; seq++ {
		from, err := sayHello(context.Background(), sp, "back", seq)
		if err == nil && from == "a" {
			break
		}
		if err != nil && !errors.Is(err, communicator.ErrNoEndpoint) {
			t.Fatalf("while a comes back: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a did not come back within 2s: from %q, %v", from, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// etcdDeregisterAll deletes every key of the servant, as if all its servers stopped at once.
func etcdDeregisterAll(cli *clientv3.Client) error {
	_, err := cli.Delete(context.Background(), prefix+"/"+servant+"/", clientv3.WithPrefix())
	return err
}

// recorder is a push function that keeps every list.
type recorder struct {
	mu    sync.Mutex
	lists []naming.List
	ch    chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 1)} }

func (r *recorder) push(l naming.List) {
	r.mu.Lock()
	r.lists = append(r.lists, l)
	r.mu.Unlock()
	select {
	case r.ch <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() []naming.List {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]naming.List(nil), r.lists...)
}

// waitFor waits until the last list pushed satisfies ok.
func (r *recorder) waitFor(t *testing.T, within time.Duration, what string, ok func(naming.List) bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		if ls := r.snapshot(); len(ls) > 0 && ok(ls[len(ls)-1]) {
			return
		}
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("no push of %s within %v; pushes: %v", what, within, r.snapshot())
		}
	}
}

// TestDebounce: a burst of 50 puts gives few pushes, the last with all 50 endpoints in key order.
func TestDebounce(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	src := etcd.New(cli, prefix)
	rec := newRecorder()
	stop := src.Watch(naming.Query{Object: servant}, rec.push)
	defer stop()
	rec.waitFor(t, 5*time.Second, "the empty first list", func(l naming.List) bool { return len(l.Active) == 0 })
	const n = 50
	for i := range n {
		ep := endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: 20000 + i, Weight: -1}
		if _, err := cli.Put(context.Background(), etcd.Key(prefix, servant, ep), ep.String()); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitFor(t, 5*time.Second, "50 endpoints", func(l naming.List) bool { return len(l.Active) == n })
	time.Sleep(3 * etcd.Debounce) // nothing more may come
	ls := rec.snapshot()
	pushes := len(ls) - 1
	t.Logf("%d puts gave %d pushes", n, pushes)
	// 50 puts over loopback take tens of milliseconds: with a 100ms window a handful of pushes.
	if pushes > n/5 {
		t.Fatalf("%d puts gave %d pushes, want at most %d", n, pushes, n/5)
	}
	last := ls[len(ls)-1]
	if len(last.Active) != n {
		t.Fatalf("last list has %d endpoints, want %d", len(last.Active), n)
	}
	for i := 1; i < n; i++ {
		if last.Active[i-1].Port >= last.Active[i].Port {
			t.Fatalf("list not in key order at %d: %v", i, last.Active)
		}
	}
}

// TestRegisterRenewsLostLease: a lease revoked while the server lives is replaced: the key
// comes back under a new lease; Deregister then removes it for good.
func TestRegisterRenewsLostLease(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	ep := mustEndpoint(t, "tcp -h 127.0.0.1 -p 20001 -t 60000")
	r, err := etcd.Register(context.Background(), cli, prefix, servant, ep, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	old := r.Lease()
	if _, err := cli.Revoke(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		resp, err := cli.Get(context.Background(), r.Key())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 1 && clientv3.LeaseID(resp.Kvs[0].Lease) != old {
			if got := string(resp.Kvs[0].Value); got != ep.String() {
				t.Fatalf("value %q, want %q", got, ep.String())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key did not come back under a new lease within 3s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.Deregister(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(context.Background(), r.Key())
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("after Deregister: %v, %v", resp, err)
	}
	if err := r.Deregister(context.Background()); err != nil {
		t.Fatalf("second Deregister: %v", err)
	}
}

// TestSet: a query with a set gets the endpoints the TARS registry would give for
// findObjectByIdInSameSet.
func TestSet(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	put := func(obj, ep string) {
		t.Helper()
		e := mustEndpoint(t, ep)
		if _, err := cli.Put(context.Background(), etcd.Key(prefix, obj, e), ep); err != nil {
			t.Fatal(err)
		}
	}
	put("A.B.Obj", "tcp -h 127.0.0.1 -p 1001 -s app.sz.1")
	put("A.B.Obj", "tcp -h 127.0.0.1 -p 1002 -s app.sz.2")
	put("A.B.Obj", "tcp -h 127.0.0.1 -p 1003 -s app.sh.1")
	put("A.B.Obj", "tcp -h 127.0.0.1 -p 1004")
	put("A.B.Obj", "tcp -h 127.0.0.1 -p 1005 -s other.sz.1")
	src := etcd.New(cli, prefix)
	for _, tc := range []struct {
		set   string
		ports []int
	}{
		{"", []int{1001, 1002, 1003, 1004, 1005}},
		{"app.sz.1", []int{1001}},
		{"app.sz.*", []int{1001, 1002}},
		{"app.sz.3", nil},
		{"nope.sz.1", []int{1001, 1002, 1003, 1004, 1005}}, // no such set name: set not used
	} {
		rec := newRecorder()
		stop := src.Watch(naming.Query{Object: "A.B.Obj", Set: tc.set}, rec.push)
		rec.waitFor(t, 5*time.Second, "the first list", func(naming.List) bool { return true })
		stop()
		got := rec.snapshot()[0].Active
		var ports []int
		for _, e := range got {
			ports = append(ports, e.Port)
		}
		if len(ports) != len(tc.ports) {
			t.Errorf("set %q: ports %v, want %v", tc.set, ports, tc.ports)
			continue
		}
		for i := range ports {
			if ports[i] != tc.ports[i] {
				t.Errorf("set %q: ports %v, want %v", tc.set, ports, tc.ports)
				break
			}
		}
	}
}

// TestReconnect: etcd restarts under a running watch (same data, same ports) and, before the
// watch's client is back, the keys change and the history is compacted past the watch's
// revision: the watch reads again and pushes the new list.
func TestReconnect(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	put := func(c *clientv3.Client, port int) { putLoopback(t, c, port) }
	put(cli, 3001)
	core, logs := observer.New(zap.WarnLevel)
	src := etcd.New(cli, prefix, etcd.WithLogger(zap.New(core)))
	rec := newRecorder()
	stop := src.Watch(naming.Query{Object: servant}, rec.push)
	defer stop()
	rec.waitFor(t, 5*time.Second, "one endpoint", func(l naming.List) bool { return len(l.Active) == 1 })

	// etcd stops gracefully only after its watch streams' timeout (several seconds): this is
	// the slow part of the test.
	es.stop()
	es.start(t)
	other := newClient(t, es)
	put(other, 3002)
	put(other, 3003)
	resp, err := other.Delete(context.Background(), loopbackKey(3001))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Compact(context.Background(), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, "3002 and 3003 after the restart", func(l naming.List) bool {
		return len(l.Active) == 2 && l.Active[0].Port == 3002 && l.Active[1].Port == 3003
	})
	compacted := false
	for _, e := range logs.All() {
		if err, ok := e.ContextMap()["error"].(string); ok && strings.Contains(err, "compacted") {
			compacted = true
		}
	}
	t.Logf("watch errors seen: %d, compaction among them: %v", logs.Len(), compacted)
}
