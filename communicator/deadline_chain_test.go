package communicator_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestDeadlineCarriesDownTheChain: a client calls a relay server with a 2 s timeout; the
// relay's handler calls the greeter through a proxy whose own timeout is a minute. Called with
// the handler's ctx, the greeter's request carries what is left of the 2 s (TarsGo's timeout
// delivery); called with context.WithoutCancel(ctx), the relay's minute. Sync and async.
func TestDeadlineCarriesDownTheChain(t *testing.T) {
	seen := make(chan *server.Current, 8)
	g := startGreeter(t, "end", serverOpt{seen: seen})
	comm := newComm(t, func(c *conf.Config) {
		c.SyncInvokeTimeout = time.Minute
		c.AsyncInvokeTimeout = time.Minute
	})
	down := proxyTo(t, comm, g)

	const relayObj = "Test.Relay.RelayObj"
	relay := server.New(server.WithLogger(zaptest.NewLogger(t).Named("relay")), server.WithNumEventLoop(1), server.WithWorkers(4))
	err := server.HandleProto(relay, relayObj, "SayHello", func(ctx context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		callCtx := ctx
		if req.GetSeq()%2 == 0 {
			callCtx = context.WithoutCancel(ctx) // no deadline: the proxy's own minute
		}
		rsp := new(hellopb.HelloReply)
		if req.GetName() == "async" {
			done := make(chan error, 1)
			if err := down.AsyncInvoke(callCtx, "SayHello", req, rsp, func(err error) { done <- err }); err != nil {
				return nil, err
			}
			if err := <-done; err != nil {
				return nil, err
			}
			return rsp, nil
		}
		return rsp, down.Invoke(callCtx, "SayHello", req, rsp)
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := relay.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopServer(t, "relay", relay); err != nil {
			t.Errorf("stop relay: %v", err)
		}
	})
	_, port, _ := net.SplitHostPort(addr.String())
	var up servantproxy.ServantProxy
	if err := comm.StringToProxy(relayObj+"@tcp -h 127.0.0.1 -p "+port, &up); err != nil {
		t.Fatal(err)
	}

	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		seq  uint64
		lo   int32 // the greeter's Current.Timeout, ms, within [lo, hi]
		hi   int32
	}{
		{"sync", 1, 1, 2000},
		{"sync", 2, 2001, 60000},
		{"async", 3, 1, 2000},
		{"async", 4, 2001, 60000},
	} {
		if _, err := sayHello(ctx, &up, tc.name, tc.seq, servantproxy.WithTimeout(2*time.Second)); err != nil {
			t.Fatalf("%s call %d through the relay: %v", tc.name, tc.seq, err)
		}
		select {
		case cur := <-seen:
			if cur.Timeout < tc.lo || cur.Timeout > tc.hi {
				t.Errorf("%s call %d: the greeter's request carries a %d ms timeout, want within [%d, %d]",
					tc.name, tc.seq, cur.Timeout, tc.lo, tc.hi)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s call %d: the greeter saw no request", tc.name, tc.seq)
		}
	}
}
