package communicator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// backupPair starts two greeters that hold every call (until released, or their
// server stops) and a proxy to both with backup requests after delay for SayHello. The health
// rules take no endpoint out for the calls' timeouts (they would stay out past the test's next
// call: a ping answered on a connection whose calls timed out does not bring an endpoint back).
func backupPair(t *testing.T, delay time.Duration, hold bool) (a, b *greeter, seenA, seenB chan *server.Current, sp *servantproxy.ServantProxy) {
	t.Helper()
	seenA, seenB = make(chan *server.Current, 4), make(chan *server.Current, 4)
	a = startGreeter(t, "a", serverOpt{block: true, hold: hold, seen: seenA})
	b = startGreeter(t, "b", serverOpt{block: true, hold: hold, seen: seenB})
	c := newComm(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: delay,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
		c.Health.FrequentFailInvoke, c.Health.MinTimeoutInvoke = 1000, 1000
	}))
	return a, b, seenA, seenB, proxyTo(t, c, a, b)
}

// callWithTimeout starts a SayHello with timeout, async or sync on a goroutine; its error comes
// on the channel.
func callWithTimeout(t *testing.T, sp *servantproxy.ServantProxy, async bool, timeout time.Duration) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	req := &hellopb.HelloRequest{Name: "x", Seq: 1}
	if async {
		if err := sp.AsyncInvoke(context.Background(), "SayHello", req, new(hellopb.HelloReply),
			func(err error) { done <- err }, servantproxy.WithTimeout(timeout)); err != nil {
			t.Fatalf("AsyncInvoke: %v", err)
		}
	} else {
		go func() {
			done <- sp.Invoke(context.Background(), "SayHello", req, new(hellopb.HelloReply), servantproxy.WithTimeout(timeout))
		}()
	}
	return done
}

// TestBackupCarriesTimeLeft: a backup request is sent delay after its call
// started, and the caller stops waiting for both at the call's one deadline; the backup's
// iTimeout must be what is left of the call's time then (README "Deadlines down a chain": the
// server's handler ctx gets that deadline; ARCHITECTURE: "The time left is sent to the server
// as iTimeout"), not the whole timeout again, or the backup's server works on for delay after
// the caller gave up. Sync and async. Before, the backup was a byte copy of the first request's
// frame, iTimeout included: both carried the whole 2 s.
func TestBackupCarriesTimeLeft(t *testing.T) {
	const (
		timeout = 2 * time.Second
		delay   = 600 * time.Millisecond
	)
	_, _, seenA, seenB, sp := backupPair(t, delay, false)
	for _, async := range []bool{false, true} {
		done := callWithTimeout(t, sp, async, timeout)
		var got []int32 // iTimeouts in the order the servers saw them: the call's, then its backup's
		for len(got) < 2 {
			select {
			case cur := <-seenA:
				got = append(got, cur.Timeout)
			case cur := <-seenB:
				got = append(got, cur.Timeout)
			case <-time.After(10 * time.Second):
				t.Fatalf("async %v: the servers saw %d requests (iTimeouts %v), want the call and its backup", async, len(got), got)
			}
		}
		select {
		case err := <-done:
			if !errors.Is(err, communicator.ErrTimeout) {
				t.Errorf("async %v: the call ended with %v, want ErrTimeout (both servers hold it)", async, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("async %v: the call did not end", async)
		}
		// The backup left at least delay after the call started: at most timeout-delay was left
		// (+1 ms for rounding up).
		if limit := int32((timeout-delay)/time.Millisecond) + 1; got[1] > limit {
			t.Errorf("async %v: the call carried iTimeout %d ms, its backup, sent at least %v later, %d ms: want at most %d (what was left)",
				async, got[0], delay, got[1], limit)
		}
	}
}

// TestBackupElapsed: a call with a backup whose first request fails (its
// server's connections drop) and whose backup then times out ends with ErrTimeout at the call's
// deadline; its CallError.Elapsed ("from the call's start to its end", README "Errors": "the
// time spent") must be at least the call's timeout, not the time since the backup was sent.
// Sync and async. Before, Elapsed was counted from the backup's send (about 800 ms for a 1.5 s
// timeout).
func TestBackupElapsed(t *testing.T) {
	const (
		timeout = 1500 * time.Millisecond
		delay   = 700 * time.Millisecond
	)
	for _, async := range []bool{false, true} {
		a, b, seenA, seenB, sp := backupPair(t, delay, true)
		done := callWithTimeout(t, sp, async, timeout)
		first := a
		select {
		case <-seenA:
			<-seenB // the backup
		case <-seenB:
			first = b
			<-seenA
		case <-time.After(10 * time.Second):
			t.Fatalf("async %v: the call reached no server", async)
		}
		first.kill(t) // the first request fails (connection lost); the backup holds on
		select {
		case err := <-done:
			var ce *communicator.CallError
			if !errors.Is(err, communicator.ErrTimeout) || !errors.As(err, &ce) {
				t.Fatalf("async %v: the call ended with %v, want a CallError wrapping ErrTimeout", async, err)
			}
			if ce.Elapsed < timeout {
				t.Errorf("async %v: a call with timeout %v ended by its deadline reports Elapsed %v (%v): want at least %v, the time since the call started",
					async, timeout, ce.Elapsed, err, timeout)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("async %v: the call did not end", async)
		}
	}
}

// TestParkedCallCarriesTimeLeft: a call made before its servant's first endpoint list waits for
// it (parked), and is sent when the list comes, 400 ms later: its iTimeout is what is left of
// its 2 s then, not the whole 2 s it was encoded with (the list's Install and the connection's
// Opened both tell it, call.Call.Delayed). Before, the frame left as encoded, and the server
// worked on for 400 ms after the caller gave up.
func TestParkedCallCarriesTimeLeft(t *testing.T) {
	const (
		timeout = 2 * time.Second
		wait    = 400 * time.Millisecond
	)
	seen := make(chan *server.Current, 1)
	a := startGreeter(t, "a", serverOpt{seen: seen})
	src := &pushSource{ready: make(chan struct{})}
	c, err := communicator.New(conf.Default(), communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closeComm(t, c) }()
	sp, err := c.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- sp.Invoke(context.Background(), "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 1}, new(hellopb.HelloReply),
			servantproxy.WithTimeout(timeout))
	}()
	<-src.ready
	time.Sleep(wait) // the call waits, parked, for the list
	src.send(a)
	if err := <-done; err != nil {
		t.Fatalf("the call failed: %v", err)
	}
	cur := <-seen
	if limit := int32((timeout-wait)/time.Millisecond) + 1; cur.Timeout > limit {
		t.Fatalf("a call parked %v for its endpoint list carried iTimeout %d ms: want at most %d (what was left)", wait, cur.Timeout, limit)
	}
}
