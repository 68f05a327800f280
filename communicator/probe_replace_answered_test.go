package communicator_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestProbeReplaceKeepsAnsweredCall: a project server in inline mode (the server's default),
// one loop, is busy for a while in one slow handler: a call to it times out (200 ms), which
// takes the endpoint out of rotation (frequent-fail-invoke = 1), and the next call, "echo" with
// 6 s to go, is written to the same connection and waits behind the slow one at the server. The
// health probe (tars_ping, 500 ms) waits there too and goes unanswered. Before, the client then
// replaced the connection (AdapterProxy.replace) and closed the old one: the server answered
// "echo" well within its 6 s, but to the closed socket, so a call the server ran and answered
// ended with ErrTimeout. On udp that broke the promise of adapterproxy/udp.go (an unanswered
// probe "only keeps it inactive"); on tcp, the promise of replace's own comment (the calls on the
// old connection end "as they would have on the old connection", where this one got its reply).
// Now udp keeps its socket, and tcp hands the old connection to a drainer, which reads the
// replies of the calls written on it until their deadlines.
func TestProbeReplaceKeepsAnsweredCall(t *testing.T) {
	for _, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) { probeReplaceKeepsAnsweredCall(t, network) })
	}
}

func probeReplaceKeepsAnsweredCall(t *testing.T, network string) {
	endToEnd(t)
	release := make(chan struct{})
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named(network+"-server")), server.WithNumEventLoop(1))
	if err := s.Handle(udpServant, "slow", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		// Holds the server's only loop (inline mode) past its client's deadline, as a handler
		// stuck in a slow dependency does; the test's cleanup releases it before the Stop.
		<-release
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(udpServant, "echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start(network + "://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, network+" server", s) })
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseOnce)

	c := newComm(t, func(cfg *conf.Config) { cfg.NetThread = 1 })
	var sp *servantproxy.ServantProxy
	if network == "udp" {
		sp = udpProxy(t, c, udpEndpoint(a.(*net.UDPAddr)))
	} else {
		sp = objProxy(t, c, udpServant, tcpEndpoint(a.String()))
	}
	ctx := testCtx(t)
	t0 := time.Now()
	_, err = sp.InvokeRaw(ctx, "slow", []byte("s"), servantproxy.WithTimeout(200*time.Millisecond))
	t.Logf("slow call ended after %v: %v", time.Since(t0), err)
	if !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("slow call: %v, want ErrTimeout", err)
	}

	// The server stays busy for 2.5 s more (the client's probe is due 250 ms after the timeout,
	// and unanswered 500 ms later), then answers what waited: "slow", then "echo".
	timer := time.AfterFunc(2500*time.Millisecond, releaseOnce)
	t.Cleanup(func() {
		if timer.Stop() {
			releaseOnce()
		}
	})

	start := time.Now()
	got, err := sp.InvokeRaw(ctx, "echo", []byte("e"), servantproxy.WithTimeout(6*time.Second))
	took := time.Since(start)
	for _, e := range c.Stats().Endpoints {
		t.Logf("endpoint %s: sent %d replies %d late %d timeouts %d conn losses %d reconnects %d deactivated %d",
			e.Endpoint, e.Sent, e.Replies, e.Late, e.Timeouts, e.ConnLosses, e.Reconnects, e.Deactivated)
	}
	if err != nil || string(got) != "e" {
		t.Fatalf("echo, answered by the server once its slow handler returned (2.5 s in), ended after %v with %q, %v; "+
			"want its reply: an unanswered health probe replaced the %s connection the call was written on, and the "+
			"server's reply went to the closed socket", took.Round(time.Millisecond), got, err, network)
	}
}
