package communicator_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
)

// TestFaultsKeepAliveBlackHoleWithOnewayTraffic black-holes a connection (both ways, the
// proxy still reading) while a sync call with a long timeout waits on it and the application
// keeps sending one-way calls every 40 ms (a logger, a reporter). Nothing comes back and no byte
// that was waiting moves on: by docs/ARCHITECTURE.md ("Keepalive": a connection that made no
// progress for the interval — a write the socket takes at once is not progress — sends
// tars_ping; unanswered, the connection is closed) and README ("a silently dropped peer is
// noticed"), keepalive closes the connection and fails the waiting call with ErrConnection
// within a few intervals. Before, every write kept the connection from counting as idle, so no
// ping went: the call waited out its 4 s deadline and the one-way calls were lost silently.
func TestFaultsKeepAliveBlackHoleWithOnewayTraffic(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.KeepAliveInterval = keepAlive
		c.SyncInvokeTimeout = 4 * time.Second
	}))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.BlackHole(faultproxy.Both)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := uint64(100); ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			_ = onewayHello(ctx, sp, "log", i)
		}
	})
	start := time.Now()
	_, err := sayHello(ctx, sp, "lost", 1)
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("a call on a black-holed connection that also carries one-way calls: err = %v after %v; "+
			"want ErrConnection from the keepalive within a few %v intervals (the one-way writes, which the socket "+
			"takes at once, kept the connection 'busy' so no ping was ever sent; proxy client closes %d)",
			err, took, keepAlive, ep.p.Stats().ClientCloses)
	}
	within(t, "failing the call on a black-holed connection", took, 5*keepAlive+slack)
	_ = ep.p.Pass()
}
