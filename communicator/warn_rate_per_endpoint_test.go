package communicator_test

import (
	"context"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// deadAddr returns a 127.0.0.1 address nobody listens on: connects to it are refused.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestConnectWarnRatePerEndpoint: communicator.WithLogger documents that
// "warnings (a failed connect, a lost connection) are rate-limited per endpoint", and
// adapterproxy's warn "at most once a second per endpoint". A client with 4 net threads and
// `connections = 4` calls one dead endpoint (connection refused) about 1000 times a second:
// the warn lines naming that endpoint may number about one a second. The limit is kept per
// AdapterProxy, which is one per net thread and connection: 16 of them here, each warning once a
// second, so the endpoint gets about 16 warnings a second (netthread 64 x connections 64 allows
// 4096 a second for one endpoint).
//
// Before, the limit was per connection per net thread: 61 lines for 4 threads x 4 connections.
func TestConnectWarnRatePerEndpoint(t *testing.T) {
	endToEnd(t)
	core, logs := observer.New(zap.DebugLevel)
	const threads, conns = 4, 4
	c := newCommWith(t, func(cfg *conf.Config) {
		cfg.NetThread = threads
		cfg.LogLevel = "debug"
		cfg.Servants = map[string]conf.Servant{servant: {Connections: conns}}
	}, communicator.WithLogger(zap.New(core)))
	addr := deadAddr(t)
	sp := proxyToAddrs(t, c, tcpEndpoint(addr))

	ctx := testCtx(t)
	const calls = 2500
	start := time.Now()
	failed := 0
	for i := range calls {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := sp.Invoke(cctx, "SayHello", &hellopb.HelloRequest{Name: "x", Seq: uint64(i)}, new(hellopb.HelloReply), servantproxy.WithTimeout(200*time.Millisecond))
		cancel()
		if err == nil {
			t.Fatalf("call %d to the dead endpoint %s succeeded", i, addr)
		}
		if errors.Is(err, communicator.ErrConnection) || errors.Is(err, communicator.ErrNoEndpoint) || errors.Is(err, communicator.ErrTimeout) {
			failed++
		}
		time.Sleep(time.Millisecond) // about 1000 calls a second
	}
	elapsed := time.Since(start)

	var warns, dials int
	for _, e := range logs.All() {
		if e.Message != "connect failed" {
			continue
		}
		dials++
		if e.Level >= zapcore.WarnLevel && e.ContextMap()["endpoint"] == addr {
			warns++
		}
	}
	secs := math.Ceil(elapsed.Seconds())
	documented := int(secs) + 1 // once a second, and once at the start
	allowed := 2 * documented   // a generous margin
	t.Logf("%d calls (%d failed as expected) in %v: %d failed connects, %d of them logged at warn", calls, failed, elapsed.Round(time.Millisecond), dials, warns)
	if dials < 2*threads*conns {
		t.Fatalf("only %d failed connects were seen: the calls did not reach every connection, the check proves nothing", dials)
	}
	if warns > allowed {
		t.Errorf("%d warn lines \"connect failed\" for the one endpoint %s in %.0f s (%d net threads x %d connections); "+
			"documented: at most once a second per endpoint (%d), allowed with margin %d", warns, addr, secs, threads, conns, documented, allowed)
	}
}
