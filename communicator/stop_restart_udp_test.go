package communicator_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// udpHolder serves udpServant's "echo" over UDP on loopback, holding a "hold" request until
// release is closed; holding counts the requests held.
func udpHolder(t *testing.T, id string, release <-chan struct{}) (s *server.Server, addr *net.UDPAddr, holding *atomic.Int32) {
	t.Helper()
	endToEnd(t)
	holding = new(atomic.Int32)
	s = server.New(server.WithLogger(zaptest.NewLogger(t).Named("udp-"+id)), server.WithWorkers(8))
	if err := s.Handle(udpServant, "echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		if string(req) == "hold" {
			holding.Add(1)
			<-release
		}
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("udp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopServer(t, "udp "+id, s); err != nil {
			t.Logf("stop udp %s: %v", id, err)
		}
	})
	return s, a.(*net.UDPAddr), holding
}

// TestStopUDPThroughStopEnd is TestStopCallsThroughStopEnd over UDP: callers
// call a proxy to two UDP servers across one's graceful Stop and the second after it; no call
// fails. Before, a call sent after the Stop ended failed with "connection refused" (ICMP).
func TestStopUDPThroughStopEnd(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	sa, aa, holdingA := udpHolder(t, "a", release)
	_, ab, _ := udpHolder(t, "b", release)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	comm := newComm(t, nil)
	var both, onlyA servantproxy.ServantProxy
	if err := comm.StringToProxy(udpServant+"@"+udpEndpoint(aa)+":"+udpEndpoint(ab), &both); err != nil {
		t.Fatal(err)
	}
	if err := comm.StringToProxy(udpServant+"@"+udpEndpoint(aa), &onlyA); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	held := make(chan error, 1)
	go func() {
		_, err := onlyA.InvokeRaw(ctx, "echo", []byte("hold"), servantproxy.WithTimeout(25*time.Second))
		held <- err
	}()
	for deadline := time.Now().Add(live); holdingA.Load() < 1; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server a holds no call %v after it was made\n%s", live, allStacks())
		}
	}
	for i := range 10 {
		if _, err := both.InvokeRaw(ctx, "echo", []byte("warm")); err != nil {
			t.Fatalf("warm-up %d: %v", i, err)
		}
	}
	began := time.Now()
	stopCallers := startCallers(began, func(w, i int) error {
		body := fmt.Appendf(nil, "during %d %d", w, i)
		rsp, err := both.InvokeRaw(ctx, "echo", body, servantproxy.WithTimeout(time.Second))
		if err == nil && !bytes.Equal(rsp, body) {
			err = fmt.Errorf("reply %q to %q", rsp, body)
		}
		return err
	})
	stopped := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		stopped <- sa.Stop(sctx)
	}()
	time.Sleep(1500 * time.Millisecond)
	releaseOnce.Do(func() { close(release) })
	if err := <-held; err != nil {
		t.Errorf("held call: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("a's Stop: %v", err)
	}
	t.Logf("a's Stop ended at %v", time.Since(began).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	calls, failed, errs := stopCallers()
	if failed > 0 {
		t.Fatalf("%d of %d udp calls made across one of two servers' graceful Stop failed; first: %v", failed, calls, errs)
	}
}
