package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/server"
)

// TestOversizedRequestFailsAlone: client and server both have max-packet-size 1 MiB. Four calls
// are in flight on the one connection (the server holds them) when a call with a 1.5 MiB request
// is made: it fails at once, alone, with ErrRequestTooLarge, and the four calls in flight are
// answered. Before, the client wrote the frame, the server took the length prefix for a broken
// stream and closed the connection, and every call on it failed with a connection error (the
// oversized one included, with an error that did not say why).
func TestOversizedRequestFailsAlone(t *testing.T) {
	endToEnd(t)
	const limit = 1 << 20
	release := make(chan struct{})
	var held atomic.Int64
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithNumEventLoop(1),
		server.WithWorkers(16), server.WithMaxPacketSize(limit))
	if err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if strings.HasPrefix(req.GetName(), "held") && ownCaller(cur) {
			held.Add(1)
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		}
		return &hellopb.HelloReply{Message: req.GetName()[:min(len(req.GetName()), 8)] + "@s", Seq: req.GetSeq()}, nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		if err := stopServer(t, "server", s); err != nil {
			t.Logf("stop server: %v", err)
		}
	})
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.MaxPacketSize = limit
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(a.String()))
	ctx := testCtx(t)

	// Four calls in flight on the connection.
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rsp := new(hellopb.HelloReply)
			errs[i] = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: fmt.Sprintf("held%d", i), Seq: uint64(i)}, rsp, withTimeout(15*time.Second)...)
		})
	}
	waitFor(t, "the server to hold the 4 calls", func() bool { return held.Load() == n })

	// The oversized call.
	big := &hellopb.HelloRequest{Name: strings.Repeat("x", limit+limit/2), Seq: 99}
	bigErr := sp.Invoke(ctx, "SayHello", big, new(hellopb.HelloReply), withTimeout(5*time.Second)...)

	close(release)
	wg.Wait()
	var bad []string
	if bigErr == nil {
		bad = append(bad, "the 1.5 MiB request (max-packet-size 1 MiB) succeeded")
	} else if !errors.Is(bigErr, communicator.ErrRequestTooLarge) {
		bad = append(bad, fmt.Sprintf("the 1.5 MiB request failed with %v; want it refused before sending, with an error saying it exceeds max-packet-size", bigErr))
	}
	for i, err := range errs {
		if err != nil {
			bad = append(bad, fmt.Sprintf("call %d in flight on the same connection failed: %v; want it answered", i, err))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("oversized request:\n  %s", strings.Join(bad, "\n  "))
	}
}
