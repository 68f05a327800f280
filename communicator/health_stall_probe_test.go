package communicator_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// stallServer is a project server (inline mode, one loop) on network serving udpServant:
// "slow" holds the server's only loop until release when hold is set (so tars_ping waits too:
// the whole server is stalled, as a paused process or a lost path), "echo" answers at once and
// counts.
type stallServer struct {
	srv     *server.Server
	addr    net.Addr
	echoes  atomic.Int64
	release chan struct{}
	once    sync.Once
}

func (s *stallServer) unstall() { s.once.Do(func() { close(s.release) }) }

func startStallServer(t *testing.T, network, name string, hold bool) *stallServer {
	t.Helper()
	endToEnd(t)
	r := &stallServer{release: make(chan struct{})}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named(name)), server.WithNumEventLoop(1))
	if err := s.Handle(udpServant, "slow", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		if hold {
			<-r.release
		}
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(udpServant, "echo", func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		if network == "udp" || ownCaller(cur) { // ownCaller reads /proc/net/tcp only
			r.echoes.Add(1)
		}
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start(network + "://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.srv, r.addr = s, a
	t.Cleanup(func() { _ = stopServer(t, name, s) })
	t.Cleanup(r.unstall) // runs before the Stop
	return r
}

func (s *stallServer) endpoint(network string) string {
	if network == "udp" {
		return udpEndpoint(s.addr.(*net.UDPAddr))
	}
	return tcpEndpoint(s.addr.String())
}

func endpointStatsOf(c *communicator.Communicator, addr string) (stats.Endpoint, bool) {
	for _, e := range c.Stats().Endpoints {
		if e.Endpoint == addr {
			return e, true
		}
	}
	return stats.Endpoint{}, false
}

// TestStalledEndpointBackByProbe: endpoint A of two stalls as a whole (its server's only
// loop held: calls and tars_ping wait), so a call to it times out and frequent-fail-invoke = 1
// takes it out; a second later the server serves again. README ("Health"): the probes (tars_ping
// every 250 ms) bring an endpoint down for a moment back within about a quarter second; udp.go:
// "Health probes of an inactive endpoint are still sent: unanswered, they only keep it inactive".
// try-interval is 60 s here, so only a probe can bring A back within the test's bound.
//
// On tcp the unanswered probe replaces the connection and the next probe, on the new one, brings
// A back. On udp the socket is kept (udp.go), so every later probe is a ping on a connection
// opened before A went out: health.ok ignored those (d7f1af0), and A stayed out for the whole
// try-interval though its server answered every ping at once. A ping answered after a probe
// went unanswered counts now.
func TestStalledEndpointBackByProbe(t *testing.T) {
	for _, network := range []string{"tcp", "udp"} {
		t.Run(network, func(t *testing.T) { stalledEndpointBackByProbe(t, network) })
	}
}

func stalledEndpointBackByProbe(t *testing.T, network string) {
	leakCheckEach(t)
	a := startStallServer(t, network, network+"-A", true)
	b := startStallServer(t, network, network+"-B", false)
	c := newComm(t, faultConf(func(cfg *conf.Config) {
		cfg.Health.FrequentFailInvoke = 1
		cfg.Health.TryInterval = time.Minute
		cfg.Servants = map[string]conf.Servant{udpServant: {LoadBalance: "roundrobin"}}
	}))
	var sp *servantproxy.ServantProxy
	if network == "udp" {
		sp = udpProxy(t, c, a.endpoint("udp"), b.endpoint("udp"))
	} else {
		sp = objProxy(t, c, udpServant, a.endpoint("tcp"), b.endpoint("tcp"))
	}
	ctx := testCtx(t)
	aAddr := a.addr.String()

	// A "slow" call goes to A within two (round robin) and times out: A is out.
	timedOut := false
	for i := 0; i < 4 && !timedOut; i++ {
		_, err := sp.InvokeRaw(ctx, "slow", []byte("s"), servantproxy.WithTimeout(200*time.Millisecond))
		timedOut = errors.Is(err, communicator.ErrTimeout)
		if err != nil && !timedOut {
			t.Fatalf("slow call: %v", err)
		}
	}
	if !timedOut {
		t.Fatal("no slow call reached A")
	}
	waitFor(t, "A out of rotation", func() bool {
		e, ok := endpointStatsOf(c, aAddr)
		return ok && !e.Active && e.Deactivated >= 1
	})
	// Let at least two probes go unanswered, then the server serves again.
	time.Sleep(800 * time.Millisecond)
	a.unstall()
	released := time.Now()

	// Traffic keeps going (to B while A is out); A must be back and serve within seconds.
	deadline := released.Add(5 * time.Second)
	for a.echoes.Load() == 0 && time.Now().Before(deadline) {
		if _, err := sp.InvokeRaw(ctx, "echo", []byte("e"), servantproxy.WithTimeout(2*time.Second)); err != nil {
			t.Fatalf("echo: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e, _ := endpointStatsOf(c, aAddr)
	t.Logf("%s A: active %v sent %d replies %d late %d timeouts %d deactivated %d conn losses %d; B echoes %d",
		network, e.Active, e.Sent, e.Replies, e.Late, e.Timeouts, e.Deactivated, e.ConnLosses, b.echoes.Load())
	if a.echoes.Load() == 0 {
		t.Fatalf("%s: A, serving again (answering every ping) since %v, got no call in 5 s: its probes' answers "+
			"were ignored (a ping on a connection opened before it went out); only the try-interval (1 m) call would bring it back",
			network, time.Since(released).Round(time.Millisecond))
	}
}
