package communicator_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// TestServerStatsCountQueueFullRefusals: a worker-mode server with WithStats refuses requests of
// a registered function with RetOverload (-9, "server queue is full") when its worker queue is
// full, and counts each refusal in Server.Stats under -9 (so in the stat report and tarsprom's
// server collector) and in LimitStats().QueueFull, as many as the client got. They used to be
// counted nowhere on the server: under overload, the one sign that it sheds load was missing
// from its own metrics.
func TestServerStatsCountQueueFullRefusals(t *testing.T) {
	endToEnd(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	srv := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithStats(),
		server.WithWorkers(1), server.WithQueueCap(1))
	if err := srv.Handle(servant, "Block", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	rel := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { rel(); _ = stopServer(t, "server", srv) })

	comm := newComm(t, nil)
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+tcpEndpoint(addr.String()), &sp); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	errs := make(chan error, 16)
	call := func() {
		_, err := sp.InvokeRaw(ctx, "Block", []byte("x"))
		errs <- err
	}
	go call() // takes the one worker
	select {
	case <-entered:
	case <-time.After(live):
		t.Fatal("the first call never reached its handler")
	}
	go call() // fills the queue of 1
	time.Sleep(100 * time.Millisecond)
	const refusedWanted = 4
	for range refusedWanted {
		go call() // each finds the queue full: answered -9 at once
	}
	// The refusals come back at once; then the two held calls are let go.
	refused := 0
	var others []error
	deadline := time.After(live)
	for got := range 2 + refusedWanted {
		if got == refusedWanted {
			rel()
		}
		select {
		case err := <-errs:
			if se, ok := errors.AsType[*servantproxy.ServerError](err); ok && se.Code == codec.RetOverload {
				refused++
			} else {
				others = append(others, err)
				rel() // not refused: it may be one of the held calls, let them all end
			}
		case <-deadline:
			rel()
			t.Fatalf("calls did not end (refused so far %d)", refused)
		}
	}
	if refused == 0 {
		t.Fatalf("no call was refused with -9 (others: %v); the test did not fill the queue", others)
	}
	var serverOverload, serverOK uint64
	for _, c := range srv.Stats().Calls {
		if c.Servant != servant || c.Function != "Block" {
			continue
		}
		serverOK += c.Results[stats.OK]
		for _, cc := range c.Codes {
			if cc.Code == codec.RetOverload {
				serverOverload += cc.Count
			}
		}
	}
	t.Logf("client saw %d refusals (-9); server Stats: %d ok, %d under code -9; LimitStats %+v",
		refused, serverOK, serverOverload, srv.LimitStats())
	if serverOverload != uint64(refused) {
		t.Errorf("server Stats counted %d requests answered -9 (queue full), the client got %d such replies", serverOverload, refused)
	}
	if n := srv.LimitStats().QueueFull; n != int64(refused) {
		t.Errorf("LimitStats().QueueFull = %d, the client got %d refusals", n, refused)
	}
}
