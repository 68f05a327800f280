package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestStopGivenUpMovesQueuedCalls: a server's one worker runs a call its handler will not end
// for Stop, and three more calls wait behind it in the server's queue; the server's Stop gives
// up after 500 ms. The three calls never ran, and reach the client's other endpoint: the Stop
// that gave up answered them -9 "server is stopping" before it closed the connection, as it
// answers the calls it refuses. Before, they were dropped with the connection, and each caller
// got a connection error (retries = 0) for a call no server had run.
func TestStopGivenUpMovesQueuedCalls(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	a := countingHolder(t, "a", release, nil, server.WithWorkers(1))
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the server's Stop
	b := startGreeter(t, "b", serverOpt{})
	comm := newComm(t, nil)
	both := proxyTo(t, comm, a, b)
	ctx := testCtx(t)

	// A hash code whose calls go to a: the held call, the queued ones and the ping share its
	// connection, so the server reads them in that order and its one worker takes the held first.
	code, found := uint64(0), false
	for k := range uint64(64) {
		if from, err := sayHello(ctx, both, "probe", uint64(k), servantproxy.WithHash(k)); err != nil {
			t.Fatalf("probe call: %v", err)
		} else if from == "a" {
			code, found = k, true
			break
		}
	}
	if !found {
		t.Fatal("no hash code of 64 sends calls to a")
	}
	pendingAtA := func() int {
		n := 0
		for _, e := range comm.Stats().Endpoints {
			if e.Servant == servant && e.Endpoint == a.addr {
				n += e.Pending
			}
		}
		return n
	}
	waitPending := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); pendingAtA() != n; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d calls pending at a, want %d", pendingAtA(), n)
			}
		}
	}
	opt := []servantproxy.CallOption{servantproxy.WithHash(code), servantproxy.WithTimeout(20 * time.Second)}
	held := make(chan error, 1)
	go func() { _, err := sayHello(ctx, both, "hold", 0, opt...); held <- err }()
	waitPending(1)
	type result struct {
		from string
		err  error
	}
	const queued = 3
	results := make(chan result, queued)
	for i := range queued {
		go func() {
			from, err := sayHello(ctx, both, "queued", uint64(i+1), opt...)
			results <- result{from, err}
		}()
	}
	waitPending(1 + queued)
	// tars_ping is answered by a's loop, after it has read the frames before it on the connection
	// and handed their calls to the worker queue: the calls are at the server then.
	if err := both.Ping(ctx, opt...); err != nil {
		t.Fatalf("ping a behind the queued calls: %v", err)
	}

	sctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := a.srv.Stop(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a's Stop with a held handler: %v, want %v", err, context.DeadlineExceeded)
	}
	var failed []string
	for range queued {
		select {
		case r := <-results:
			switch {
			case r.err != nil:
				failed = append(failed, r.err.Error())
			case r.from != "b":
				failed = append(failed, fmt.Sprintf("answered by %s, which had not run it before its Stop gave up", r.from))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("a queued call did not end 30s after a's Stop gave up\n%s", allStacks())
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d of the %d calls queued at a when its Stop gave up did not reach b: %v", len(failed), queued, failed)
	}
	releaseOnce.Do(func() { close(release) })
	<-held // answered if a's engine had not closed the connection yet, else a connection error: it ran
	e, _ := attribEndpointStats(comm.Stats(), a.addr)
	if e.StopRefused != queued {
		t.Errorf("a's stop_refused = %d, want %d (the queued calls)", e.StopRefused, queued)
	}
}
