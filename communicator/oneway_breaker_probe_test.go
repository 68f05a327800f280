package communicator_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// whoTripServer starts a project server for the test servant: "Who" answers its id, "Trip" fails
// (a framework error, ret < 0) when trip is set, "Note" (called one-way) counts its calls.
func whoTripServer(t *testing.T, id string, trip bool, notes *atomic.Int64) string {
	t.Helper()
	endToEnd(t)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1))
	must := func(fn string, h server.HandlerFunc) {
		if err := s.Handle(servant, fn, h); err != nil {
			t.Fatal(err)
		}
	}
	must("Who", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		return append(rsp, id...), nil
	})
	must("Trip", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		if trip {
			return nil, errors.New("tripping")
		}
		return append(rsp, id...), nil
	})
	must("Note", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		notes.Add(1)
		return rsp, nil
	})
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "server "+id, s) })
	return a.String()
}

// TestOnewayIsNoBreakerProbe: with circuit-breaker = true, once an isolated endpoint's
// isolation is over "one call is let through, and its outcome closes the breaker or isolates the
// endpoint again" (adapterproxy.Breaker; README: "revival by a probe call"). A one-way call has
// no outcome: no reply ever comes, and it leaves the timing wheel as soon as it is written, so
// it is never the probe. Here a is tripped, its isolation passes, a one-way Note goes to a, and
// then a two-way call hashed to a is the probe (goes to a, succeeds, closes the breaker). Before,
// the first call after the isolation took the probe slot whatever it was: the one-way call made a
// refuse every call for a second (probeWait) and revived nothing, and the two-way call went to b.
func TestOnewayIsNoBreakerProbe(t *testing.T) {
	var notesA, notesB atomic.Int64
	addrA := whoTripServer(t, "a", true, &notesA)
	addrB := whoTripServer(t, "b", false, &notesB)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread, c.KeepAliveInterval = 1, 0
		livenessTimeouts(c)
		c.Servants = map[string]conf.Servant{servant: {CircuitBreaker: true}}
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(addrA), tcpEndpoint(addrB))
	ctx := testCtx(t)

	// The hash code that sends calls to a.
	var toA uint64 = 2
	for code := range uint64(2) {
		body, err := sp.InvokeRaw(ctx, "Who", nil, servantproxy.WithHash(code))
		if err != nil {
			t.Fatal(err)
		}
		if string(body) == "a" {
			toA = code
		}
	}
	if toA == 2 {
		t.Fatal("no hash code sends a call to a")
	}
	hashA := servantproxy.WithHash(toA)

	// Trip a's breaker: framework errors until a hashed call goes elsewhere.
	tripped := false
	for range 40 {
		body, err := sp.InvokeRaw(ctx, "Trip", nil, hashA)
		if err == nil && string(body) == "b" {
			tripped = true
			break
		}
	}
	if !tripped {
		t.Fatal("a's breaker did not open after 40 failed calls")
	}
	time.Sleep(400 * time.Millisecond) // the first isolation (100 ms) is over

	// A one-way call to a: the first call after the isolation.
	if err := sp.InvokeOnewayRaw(ctx, "Note", nil, hashA); err != nil {
		t.Fatalf("one-way Note: %v", err)
	}
	waitFor(t, "the one-way Note to reach a server", func() bool { return notesA.Load()+notesB.Load() == 1 })
	if notesA.Load() != 1 {
		t.Fatalf("the one-way call after the isolation went to b, not a")
	}

	// The next two-way call hashed to a: a is half-open with no probe that can have an outcome,
	// so this call should be its probe.
	body, err := sp.InvokeRaw(ctx, "Who", nil, hashA)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "a" {
		t.Fatalf("the first two-way call after a's isolation (hashed to a) was answered by %q, want a: "+
			"the one-way call sent before it took the breaker's probe slot, although it can have no outcome, "+
			"so a refuses every call for a second (probeWait) after each one-way call and is revived by none", body)
	}
	// And a is back in rotation: its probe succeeded.
	if body, err := sp.InvokeRaw(ctx, "Who", nil, hashA); err != nil || string(body) != "a" {
		t.Fatalf("after a successful probe the next call hashed to a: %q, %v; want a", body, err)
	}
}
