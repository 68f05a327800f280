package communicator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// connsEP is a greeter behind a fault proxy that reports the client address of every call (the
// proxy dials the greeter once per client connection, so an address is a client connection).
type connsEP struct {
	seen chan *server.Current
	p    *faultproxy.Proxy
}

func startConnsEP(t *testing.T, id string) *connsEP {
	t.Helper()
	endToEnd(t)
	seen := make(chan *server.Current, 4096)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1))
	// Every call is recorded, without ownCaller's check: a short connection may be gone (and its
	// owner no longer found) by the time its call is served; the server's port is known only
	// to the proxy in front of it.
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		cp := *cur // the server reuses cur after the handler returns
		cp.Context, cp.Status = nil, nil
		select {
		case seen <- &cp:
		default:
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start server %s: %v", id, err)
	}
	t.Cleanup(func() {
		if err := stopServer(t, "server "+id, s); err != nil {
			t.Logf("stop server %s: %v", id, err)
		}
	})
	return &connsEP{seen: seen, p: startProxy(t, a.String())}
}

// byConn drains the calls the greeter has seen so far and counts them by client connection.
func (e *connsEP) byConn() map[string]int {
	n := map[string]int{}
	for {
		select {
		case cur := <-e.seen:
			n[cur.RemoteAddr.String()]++
		default:
			return n
		}
	}
}

// connsConf sets connections for the test servant.
func connsConf(threads, n int) func(*conf.Config) {
	return func(c *conf.Config) {
		c.NetThread = threads
		c.Servants = map[string]conf.Servant{servant: {Connections: n}}
	}
}

// TestConnectionsPerEndpoint: with connections = 4 each net thread opens 4 connections to each
// endpoint, the calls sent to an endpoint are spread over all of them, and the stats show one
// entry per endpoint and thread with the connections' counts summed.
func TestConnectionsPerEndpoint(t *testing.T) {
	const threads, conns, calls = 2, 4, 64
	eps := []*connsEP{startConnsEP(t, "a"), startConnsEP(t, "b")}
	c := newComm(t, connsConf(threads, conns))
	sp := proxyToAddrs(t, c, tcpEndpoint(eps[0].p.Addr()), tcpEndpoint(eps[1].p.Addr()))
	for i := range calls {
		if _, err := sayHello(context.Background(), sp, "x", uint64(i)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	total := 0
	for k, e := range eps {
		if got := e.p.Stats().Accepts; got != threads*conns {
			t.Errorf("endpoint %d: %d connections accepted, want %d (%d per net thread)", k, got, threads*conns, conns)
		}
		by := e.byConn()
		if len(by) != threads*conns {
			t.Errorf("endpoint %d: calls came on %d connections, want %d: %v", k, len(by), threads*conns, by)
		}
		for addr, n := range by {
			if n == 0 {
				t.Errorf("endpoint %d: connection %s carried no call", k, addr)
			}
			total += n
		}
		t.Logf("endpoint %d: calls by connection %v", k, by)
	}
	if total != calls {
		t.Errorf("the greeters saw %d calls, want %d", total, calls)
	}
	s := c.Stats()
	if len(s.Endpoints) != threads*len(eps) {
		t.Fatalf("stats: %d endpoint entries, want %d (one per endpoint and thread): %+v", len(s.Endpoints), threads*len(eps), s.Endpoints)
	}
	sent := uint64(0)
	for _, e := range s.Endpoints {
		sent += e.Sent
	}
	if sent != calls {
		t.Errorf("stats: %d calls sent over the endpoint entries, want %d", sent, calls)
	}
	connected := 0
	for _, nt := range s.Threads {
		connected += nt.Connections
	}
	if connected != threads*conns*len(eps) {
		t.Errorf("stats: %d connections connected, want %d", connected, threads*conns*len(eps))
	}
}

// TestConnectionsOneFails: one of an endpoint's connections is closed under a call (the proxy
// replaces its reply with a frame too large and closes it): that call fails, the calls after it
// succeed on the other connections.
func TestConnectionsOneFails(t *testing.T) {
	const conns = 4
	e := startConnsEP(t, "a")
	c := newComm(t, connsConf(1, conns))
	sp := proxyToAddrs(t, c, tcpEndpoint(e.p.Addr()))
	for i := range 2 * conns {
		if _, err := sayHello(context.Background(), sp, "warm", uint64(i)); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	if got := len(e.byConn()); got != conns {
		t.Fatalf("warm-up calls came on %d connections, want %d", got, conns)
	}
	e.p.CorruptNext([]byte{0x7f, 0xff, 0xff, 0xff}, true) // a length beyond max-packet-size
	if _, err := sayHello(context.Background(), sp, "killed", 100); err == nil {
		t.Fatal("the call whose connection was closed under it succeeded")
	} else {
		t.Logf("the call on the closed connection: %v", err)
	}
	e.byConn()
	const after = 40
	for i := range after {
		if _, err := sayHello(context.Background(), sp, fmt.Sprint("after", i), uint64(200+i)); err != nil {
			t.Fatalf("call %d after one connection was closed: %v", i, err)
		}
	}
	by := e.byConn()
	n := 0
	for _, k := range by {
		n += k
	}
	if n != after || len(by) < conns-1 {
		t.Errorf("after the close: %d calls on %d connections, want %d on at least %d: %v", n, len(by), after, conns-1, by)
	}
	// Exactly one connection ended: the one whose reply was corrupted (the proxy closed it after
	// the bad bytes). Accepts − Active is no measure of it: the client redials the closed one in
	// the background, and a connection the proxy has accepted but not yet forwarded is counted in
	// Accepts and not yet in Active; Forwarded − Active is, once the proxy has settled.
	var st faultproxy.Stats
	waitFor(t, "exactly one forwarded connection to have ended", func() bool {
		st = e.p.Stats()
		return st.Forwarded-st.Active == 1
	})
	t.Logf("proxy: %+v; calls by connection after the close %v", st, by)
}

// TestConnectionsHashUnchanged: the endpoint stays the unit of balancing, so calls with one hash
// code reach one endpoint, spread over its connections.
func TestConnectionsHashUnchanged(t *testing.T) {
	const conns = 4
	eps := []*connsEP{startConnsEP(t, "a"), startConnsEP(t, "b")}
	c := newComm(t, connsConf(1, conns))
	sp := proxyToAddrs(t, c, tcpEndpoint(eps[0].p.Addr()), tcpEndpoint(eps[1].p.Addr()))
	for i := range 4 * conns {
		if _, err := sayHello(context.Background(), sp, "h", uint64(i), servantproxy.WithHash(7)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	a, b := eps[0].byConn(), eps[1].byConn()
	if (len(a) == 0) == (len(b) == 0) {
		t.Fatalf("calls of one hash code reached both endpoints or none: %v, %v", a, b)
	}
	if n := max(len(a), len(b)); n != conns {
		t.Errorf("calls of one hash code came on %d connections of their endpoint, want %d: %v %v", n, conns, a, b)
	}
}

// TestShortConnections: with short-connections each call is made on a connection of its own,
// closed by the client once the reply is read; the calls succeed.
func TestShortConnections(t *testing.T) {
	const calls = 5
	e := startConnsEP(t, "a")
	c := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{servant: {ShortConnections: true}}
	})
	sp := proxyToAddrs(t, c, tcpEndpoint(e.p.Addr()))
	for i := range calls {
		if _, err := sayHello(context.Background(), sp, "short", uint64(i)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		// Liveness bound only: the client closes the connection right after the reply.
		deadline := time.Now().Add(5 * time.Second)
		for e.p.Stats().Active != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after call %d the connection is still open: %+v", i, e.p.Stats())
			}
			time.Sleep(time.Millisecond)
		}
		if st := e.p.Stats(); st.Accepts != int64(i+1) || st.ClientCloses != int64(i+1) {
			t.Fatalf("after call %d: %d connections accepted, %d closed by the client; want %d each", i, st.Accepts, st.ClientCloses, i+1)
		}
	}
	if by := e.byConn(); len(by) != calls {
		t.Errorf("the %d calls came on %d connections, want one each: %v", calls, len(by), by)
	}
	// A one-way call waits for no reply: its connection is closed on a chore tick after it was
	// written, and the greeter gets the call.
	if err := sp.InvokeOneway(context.Background(), "SayHello", &hellopb.HelloRequest{Name: "oneway"}); err != nil {
		t.Fatalf("one-way call: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for st := e.p.Stats(); st.Accepts != calls+1 || st.ClientCloses != calls+1; st = e.p.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("after the one-way call: %+v; want %d connections accepted and closed by the client", st, calls+1)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case cur := <-e.seen:
		if cur.PacketType != codec.PacketOneway {
			t.Errorf("the greeter's last call has packet type %d, want one-way", cur.PacketType)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the greeter never got the one-way call")
	}
	s := c.Stats()
	if len(s.Endpoints) != 1 || s.Endpoints[0].ConnLosses != 0 || s.Endpoints[0].Replies != calls {
		t.Errorf("stats: %+v; want one endpoint, %d replies, no connection counted lost", s.Endpoints, calls)
	}
}
