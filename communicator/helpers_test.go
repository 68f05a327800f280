package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const servant = "Test.Server.GreeterObj"

// greeter is a test server answering SayHello with "<name>@<id>" and the request's seq.
type greeter struct {
	id      string
	srv     *server.Server
	addr    string // host:port
	release chan struct{}
	holding atomic.Int32 // calls a holding greeter's handler holds (countingHolder)
}

// ownClients holds, per client address of a connection to the tests' servers, whether it is
// this process's (a connection keeps its address while it lives): the first call of a
// connection looks, the others of that connection wait for its answer and reuse it. A look
// reads /proc; done by every call of a burst at once (128 workers), the looks took the servers'
// CPU and failed the fault stress under load. A "not ours" is looked at again once it is a
// second old: the address may be this process's again (a later connection of the tests reusing
// the port of one that had closed before it was looked at, or of another process's); kept for
// good, it made a server ignore a test's own call (CI caught it).
var ownClients sync.Map // string (host:port) -> *ownership

type ownership struct {
	once sync.Once
	own  bool
	at   time.Time // when it was looked at
}

// recheckForeign is how old a "not ours" may be before it is looked at again.
const recheckForeign = time.Second

// ownCaller reports whether cur's call came over a connection this test process opened. Tests
// of several packages, and other engineers' runs, share the machine: a client of another process
// may dial a port it used before, which a server of this test now listens on, and call it. A
// test server counts (or hands the test) only its own process's calls.
func ownCaller(cur *server.Current) bool {
	if cur.RemoteAddr == nil {
		return true
	}
	addr := cur.RemoteAddr.String()
	for {
		v, _ := ownClients.LoadOrStore(addr, new(ownership))
		o := v.(*ownership)
		o.once.Do(func() { o.own, o.at = faultproxy.FromThisProcess(addr, ""), time.Now() })
		if o.own || time.Since(o.at) <= recheckForeign {
			return o.own
		}
		ownClients.CompareAndDelete(addr, o) // an old "not ours": look again
	}
}

// endpoint returns the greeter's address as a TARS endpoint string.
func (g *greeter) endpoint() string {
	host, port, _ := net.SplitHostPort(g.addr)
	return fmt.Sprintf("tcp -h %s -p %s", host, port)
}

type serverOpt struct {
	addr  string               // default 127.0.0.1:0
	block bool                 // SayHello blocks until release is closed or the server stops
	hold  bool                 // with block: ignore the server's stop too, so only release ends it
	seen  chan *server.Current // receives the Current of every call, if set
	// handled, if set, counts the handler's runs for this test's calls; server adds options
	// (interceptors, say) to the server's.
	handled *atomic.Int32
	server  []server.Option
}

// startGreeter starts a project server on loopback; t.Cleanup stops it.
func startGreeter(t *testing.T, id string, o serverOpt) *greeter {
	t.Helper()
	endToEnd(t)
	g := &greeter{id: id, release: make(chan struct{})}
	opts := []server.Option{server.WithLogger(zaptest.NewLogger(t).Named("server-" + id)), server.WithNumEventLoop(1)}
	if o.block {
		opts = append(opts, server.WithWorkers(64))
	}
	s := server.New(append(opts, o.server...)...)
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if o.handled != nil && ownCaller(cur) {
			o.handled.Add(1)
		}
		if o.seen != nil && ownCaller(cur) {
			// The server reuses cur after the handler returns: send a copy.
			cp := *cur
			cp.Context, cp.Status = maps.Clone(cur.Context), maps.Clone(cur.Status)
			select {
			case o.seen <- &cp:
			default:
			}
		}
		if o.block {
			stop, release := stopped(ctx, o.hold)
			defer release()
			select {
			case <-g.release:
			case <-stop:
				return nil, ctx.Err()
			}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := o.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	a, err := s.Start(addr)
	if err != nil {
		t.Fatalf("start server %s: %v", id, err)
	}
	g.srv, g.addr = s, a.String()
	t.Cleanup(func() { g.stop(t) })
	return g
}

// stop stops the server at once, failing handlers in flight.
func (g *greeter) stop(t *testing.T) {
	t.Helper()
	select {
	case <-g.release:
	default:
		close(g.release)
	}
	if err := stopServer(t, "server "+g.id, g.srv); err != nil {
		t.Logf("stop server %s: %v", g.id, err)
	}
}

// kill shuts the server's engine down at once, closing its connections while handlers (started
// with hold) are still blocked, so no reply is sent: to the client it looks like a crash.
// t.Cleanup releases the handlers and waits for the rest.
func (g *greeter) kill(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_ = g.srv.Stop(ctx) // gives up waiting at once: the engine stops, connections close
	// Stop returned before the engine finished; wait until the listener is gone.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", g.addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		_ = c.Close()
	}
	t.Fatalf("server %s still accepts connections after kill", g.id)
}

// stopped returns a channel closed when the handler's ctx is cancelled other than by its
// deadline (the server's Stop giving up; never, if ignore), and a func that gives the watch back.
// The tests' handlers that model a server too slow to answer wait on it, not on ctx.Done(): a
// handler's ctx also ends at its client's deadline (server: "The handler's ctx"), and a handler
// that returned then would answer, at the deadline, the calls these tests want to see time out.
func stopped(ctx context.Context, ignore bool) (<-chan struct{}, func()) {
	if ignore {
		return nil, func() {}
	}
	ch := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			close(ch)
		}
	})
	return ch, func() { stop() }
}

// newComm starts a Communicator with cfg changed by edit; t.Cleanup closes it (bounded: see
// closeComm).
func newComm(t *testing.T, edit func(*conf.Config)) *communicator.Communicator {
	t.Helper()
	return newCommWith(t, edit)
}

// newCommWith is newComm with options beside the test's logger.
func newCommWith(t *testing.T, edit func(*conf.Config), opts ...communicator.Option) *communicator.Communicator {
	t.Helper()
	endToEnd(t)
	cfg := conf.Default()
	if edit != nil {
		edit(&cfg)
	}
	c, err := communicator.New(cfg, append([]communicator.Option{communicator.WithLogger(zaptest.NewLogger(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, c) })
	return c
}

// proxyTo binds a ServantProxy to the greeters.
func proxyTo(t *testing.T, c *communicator.Communicator, gs ...*greeter) *servantproxy.ServantProxy {
	t.Helper()
	eps := make([]string, len(gs))
	for i, g := range gs {
		eps[i] = g.endpoint()
	}
	var sp servantproxy.ServantProxy
	if err := c.StringToProxy(servant+"@"+strings.Join(eps, ":"), &sp); err != nil {
		t.Fatal(err)
	}
	return &sp
}

// sayHello makes one sync call and checks that the reply matches the request.
func sayHello(ctx context.Context, sp *servantproxy.ServantProxy, name string, seq uint64, opts ...servantproxy.CallOption) (from string, err error) {
	rsp := new(hellopb.HelloReply)
	if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp, opts...); err != nil {
		return "", err
	}
	return checkReply(rsp, name, seq)
}

func checkReply(rsp *hellopb.HelloReply, name string, seq uint64) (from string, err error) {
	msg := rsp.GetMessage()
	if rsp.GetSeq() != seq || !strings.HasPrefix(msg, name+"@") {
		return "", fmt.Errorf("reply {%q, %d} does not answer request {%q, %d}", msg, rsp.GetSeq(), name, seq)
	}
	return strings.TrimPrefix(msg, name+"@"), nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
