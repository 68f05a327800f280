package communicator_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// resetter is a listener the test owns that accepts every connection and closes it at
// once without reading a byte (a load balancer with no backend, a crashing server's port): to a
// client, README's "peer that accepts and resets". It counts the connects it accepted.
type resetter struct {
	ln      net.Listener
	accepts atomic.Int64
	wg      sync.WaitGroup
}

func startResetter(t *testing.T) *resetter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &resetter{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.accepts.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); r.wg.Wait() })
	return r
}

// TestOnewayAcceptResetBacksOff sends one-way calls, one a millisecond for
// three seconds, to a servant whose only endpoint accepts and closes every connection.
// README ("Connections"): a peer that accepts and resets counts as a failed connect, after which
// the next connect waits a backoff of 25 ms doubling to 150 ms; an endpoint down for good costs
// a dial per try-interval. Even at the backoff's floor (25 ms less 25% jitter) three seconds
// allow about 160 connects; a two-way caller makes about 25. Before, the one-way caller made one
// connect per call (1,736 in three seconds): a reconnect storm against a dead backend, each call
// reported as sent.
func TestOnewayAcceptResetBacksOff(t *testing.T) {
	const (
		callFor  = 3 * time.Second
		maxDials = 200
	)
	r := startResetter(t)
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, tcpEndpoint(r.ln.Addr().String()))
	ctx := context.Background()
	var calls, refused int
	start := time.Now()
	for time.Since(start) < callFor {
		calls++
		if err := onewayHello(ctx, sp, "x", uint64(calls)); err != nil {
			refused++
		}
		time.Sleep(time.Millisecond)
	}
	dials := r.accepts.Load()
	t.Logf("%d one-way calls in %v (%d failed): %d connects accepted and reset", calls, callFor, refused, dials)
	if dials > maxDials {
		t.Errorf("%d connects in %v to an endpoint that resets every connection (want at most %d: "+
			"a reset before any reply should back off as a failed connect); %d of %d one-way calls returned nil",
			dials, callFor, maxDials, calls-refused, calls)
	}
}

// TestOnewayAcceptResetLeavesRotation sends 400 one-way calls to a servant with
// two endpoints: a healthy project server and a port that accepts and closes every connection.
// README: such a peer counts as a failed connect, and failed connects take an endpoint out of
// rotation (max-connect-fail = 1 by default), after which calls go to the healthy endpoint (save a
// probe, and one user call per try-interval). Before, the resetting endpoint was never taken
// out: round-robin kept handing it every other call, which returned nil and was lost (200 of 400).
func TestOnewayAcceptResetLeavesRotation(t *testing.T) {
	const n = 400
	r := startResetter(t)
	g := startFGreeter(t, "good")
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, g.endpoint(), tcpEndpoint(r.ln.Addr().String()))
	ctx := context.Background()
	var sent int
	for i := range n {
		if err := onewayHello(ctx, sp, "x", uint64(i)); err == nil {
			sent++
		}
		time.Sleep(2 * time.Millisecond)
	}
	// Every call that reached the healthy server is counted there soon (a liveness bound).
	for deadline := time.Now().Add(2 * time.Second); g.oneways.Load() < int64(sent) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	got := g.oneways.Load()
	lost := int64(sent) - got
	t.Logf("%d of %d one-way calls returned nil; the healthy server got %d; the resetting port accepted %d connects", sent, n, got, r.accepts.Load())
	if lost > n/10 {
		t.Errorf("%d of %d one-way calls returned nil and reached no server: the endpoint that resets every connection stayed in rotation (%d connects)", lost, sent, r.accepts.Load())
	}
}
