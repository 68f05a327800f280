package dns_test

import (
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/dns"
)

// TestMain fails the package if a test leaves a goroutine behind; the ignored functions are the
// process-wide goroutines that gnet's dependency ants starts in its package init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// recorder keeps what a watch was pushed and told.
type recorder struct {
	mu    sync.Mutex
	lists []naming.List
	fails []error
	ch    chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 1)} }

func (r *recorder) signal() {
	select {
	case r.ch <- struct{}{}:
	default:
	}
}

func (r *recorder) push(l naming.List) {
	r.mu.Lock()
	r.lists = append(r.lists, l)
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.fails = append(r.fails, err)
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) snapshot() ([]naming.List, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lists), slices.Clone(r.fails)
}

// waitFor waits (a liveness bound of seconds) until ok holds for what was recorded.
func (r *recorder) waitFor(t *testing.T, what string, ok func([]naming.List, []error) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if ok(r.snapshot()) {
			return
		}
		select {
		case <-r.ch:
		case <-deadline:
			ls, fs := r.snapshot()
			t.Fatalf("no %s within 10s; lists %v, failures %v", what, ls, fs)
		}
	}
}

// addrs returns "host:port" of l's active endpoints.
func addrs(l naming.List) []string {
	out := []string{}
	for _, e := range l.Active {
		out = append(out, e.Addr())
	}
	return out
}

func lastIs(want ...string) func([]naming.List, []error) bool {
	return func(ls []naming.List, _ []error) bool {
		return len(ls) > 0 && slices.Equal(addrs(ls[len(ls)-1]), want)
	}
}

// TestFollowsAnswers: a watch gets the sorted addresses of the name's A and AAAA records, and
// each change of the answer; an NXDOMAIN, then the resolver down, keep the last list and are
// reported; the answer coming back is followed again.
func TestFollowsAnswers(t *testing.T) {
	rs := startResponder(t)
	rs.setA("greeter.test", "127.0.0.3", "::1", "127.0.0.1")
	src, err := dns.New("greeter.test:9000", dns.Options{Resolver: rs.addr(), Interval: 50 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	stop := src.WatchReporting(naming.Query{Object: "A.B.C"}, rec.push, rec.fail)
	defer stop()
	rec.waitFor(t, "first list", lastIs("127.0.0.1:9000", "127.0.0.3:9000", "[::1]:9000"))
	if ls, _ := rec.snapshot(); len(ls) != 1 {
		t.Fatalf("lists %v, want one", ls)
	}
	if e := func() naming.List { ls, _ := rec.snapshot(); return ls[0] }().Active[0]; e.String() != "tcp -h 127.0.0.1 -p 9000" {
		t.Fatalf("endpoint %q, want a plain tcp endpoint", e.String())
	}

	rs.setA("greeter.test", "127.0.0.2")
	rec.waitFor(t, "the changed answer", lastIs("127.0.0.2:9000"))

	// NXDOMAIN: reported, the list stays.
	rs.setA("greeter.test")
	rec.waitFor(t, "an NXDOMAIN report", func(_ []naming.List, fs []error) bool {
		var de *net.DNSError
		return len(fs) > 0 && errors.As(fs[len(fs)-1], &de) && de.IsNotFound
	})
	pushed, _ := rec.snapshot()
	asked := rs.asked("greeter.test")
	for deadline := time.Now().Add(10 * time.Second); rs.asked("greeter.test") < asked+4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) { // several more resolutions, within a liveness bound
			t.Fatalf("%d questions in 10s, want 4 more than %d", rs.asked("greeter.test"), asked)
		}
	}
	if ls, _ := rec.snapshot(); len(ls) != len(pushed) {
		t.Fatalf("an NXDOMAIN pushed %v", ls[len(pushed):])
	}

	// The answer back, then the resolver down: reported, the list stays.
	rs.setA("greeter.test", "127.0.0.4")
	rec.waitFor(t, "the answer back", lastIs("127.0.0.4:9000"))
	_, failsBefore := rec.snapshot()
	rs.stop()
	rec.waitFor(t, "a resolver-down report", func(_ []naming.List, fs []error) bool {
		return len(fs) > len(failsBefore)+2 && strings.Contains(fs[len(fs)-1].Error(), "greeter.test")
	})
	ls, fs := rec.snapshot()
	if !slices.Equal(addrs(ls[len(ls)-1]), []string{"127.0.0.4:9000"}) {
		t.Fatalf("the list after the resolver went down: %v", ls[len(ls)-1])
	}
	t.Logf("resolver down reported as: %v", fs[len(fs)-1])
}

// TestSRV: the records of the lowest priority, each target resolved, each address with its
// record's port, sorted.
func TestSRV(t *testing.T) {
	rs := startResponder(t)
	rs.setSRV("_tars._tcp.greeter.test",
		srvRecord{priority: 10, weight: 5, port: 9001, target: "b.greeter.test"},
		srvRecord{priority: 10, weight: 1, port: 9002, target: "a.greeter.test"},
		srvRecord{priority: 20, weight: 1, port: 9003, target: "c.greeter.test"}, // a backup priority: not used
	)
	rs.setA("a.greeter.test", "127.0.0.1")
	rs.setA("b.greeter.test", "127.0.0.2", "127.0.0.1")
	rs.setA("c.greeter.test", "127.0.0.9")
	src, err := dns.NewSRV("_tars._tcp.greeter.test", dns.Options{Resolver: rs.addr(), Interval: 50 * time.Millisecond, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	stop := src.Watch(naming.Query{Object: "A.B.C"}, rec.push)
	defer stop()
	rec.waitFor(t, "the SRV list", lastIs("127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.2:9001"))

	rs.setSRV("_tars._tcp.greeter.test", srvRecord{priority: 20, weight: 1, port: 9003, target: "c.greeter.test"})
	rec.waitFor(t, "the changed SRV list", lastIs("127.0.0.9:9003"))
}

// TestPlaceholders: each servant resolves its own name; an object that is not
// App.Server.Servant is reported.
func TestPlaceholders(t *testing.T) {
	rs := startResponder(t)
	rs.setA("hello.test.svc", "127.0.0.1")
	rs.setA("world.test.svc", "127.0.0.2")
	src, err := dns.New("{server}.{app}.svc:9000", dns.Options{Resolver: rs.addr(), Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hello, world, bad := newRecorder(), newRecorder(), newRecorder()
	defer src.Watch(naming.Query{Object: "Test.Hello.Obj"}, hello.push)()
	defer src.Watch(naming.Query{Object: "Test.World.Obj"}, world.push)()
	defer src.WatchReporting(naming.Query{Object: "NoDots"}, bad.push, bad.fail)()
	hello.waitFor(t, "Hello's list", lastIs("127.0.0.1:9000"))
	world.waitFor(t, "World's list", lastIs("127.0.0.2:9000"))
	bad.waitFor(t, "the report of a bad object", func(ls []naming.List, fs []error) bool {
		return len(ls) == 0 && len(fs) == 1 && strings.Contains(fs[0].Error(), "App.Server.Servant")
	})
}

// TestSchemes: the dns and dns+srv schemes read their options; bad ones are errors.
func TestSchemes(t *testing.T) {
	rs := startResponder(t)
	rs.setA("greeter.test", "127.0.0.1")
	rs.setSRV("_x._tcp.greeter.test", srvRecord{port: 7, target: "greeter.test"})
	for target, want := range map[string]string{
		"dns://greeter.test:9000?resolver=" + rs.addr() + "&interval=1s&timeout=1s": "127.0.0.1:9000",
		"dns+srv://_x._tcp.greeter.test?resolver=" + rs.addr():                      "127.0.0.1:7",
	} {
		src, err := naming.Build(target, naming.Env{})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		rec := newRecorder()
		stop := src.Watch(naming.Query{Object: "A.B.C"}, rec.push)
		rec.waitFor(t, target, lastIs(want))
		stop()
	}
	for target, want := range map[string]string{
		"dns://greeter.test":                   "host:port",
		"dns://greeter.test:0":                 "bad port",
		"dns://greeter.test:1?interval=x":      "interval",
		"dns://greeter.test:1?interval=1ms":    "below",
		"dns://greeter.test:1?resolver=nope":   "resolver",
		"dns://greeter.test:1?ttl=5":           `unknown option "ttl"`,
		"dns://10.0.0.10/greeter.test:1":       "'/'",
		"dns://{nope}.test:1":                  "", // checked per watch, below
		"dns+srv://?resolver=127.0.0.1:53":     "empty name",
		"dns://greeter.test:1?resolver=%zz":    "invalid URL escape",
		"dns://greeter.test:99999?interval=1s": "bad port",
	} {
		src, err := naming.Build(target, naming.Env{})
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", target, err)
				continue
			}
			rec := newRecorder()
			stop := src.(naming.Reporter).WatchReporting(naming.Query{Object: "A.B.C"}, rec.push, rec.fail)
			rec.waitFor(t, "the placeholder report", func(_ []naming.List, fs []error) bool {
				return len(fs) == 1 && strings.Contains(fs[0].Error(), "unknown placeholder")
			})
			stop()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", target, err, want)
		}
	}
}
