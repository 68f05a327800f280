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

// call.Call.KeepAddr: SentTo is published only for a call whose caller can give up (from the
// review of the change that made it so). The existing tests name the endpoint of a cancelled plain sync/async call; these
// cover the paths they miss: a backup pair cancelled after its backup went out (sync and async),
// a future made with a cancellable ctx, and a call cancelled while it waits for its servant's
// first endpoint list, which must name no endpoint (not one of a previous use of the pooled Call).

// backupPairOfBlockers starts two blocking greeters and a Communicator whose servant sends a backup
// of SayHello after 20ms, round robin between them.
func backupPairOfBlockers(t *testing.T) (a, b *greeter, seenA, seenB chan *server.Current, sp *servantproxy.ServantProxy) {
	t.Helper()
	seenA, seenB = make(chan *server.Current, 16), make(chan *server.Current, 16)
	a = startGreeter(t, "a", serverOpt{block: true, seen: seenA})
	b = startGreeter(t, "b", serverOpt{block: true, seen: seenB})
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: 20 * time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	})
	sp = proxyTo(t, comm, a, b)
	return
}

// bothSeen waits until both greeters' handlers have a request and returns the address of the one
// that got it first (the primary: the backup leaves 20ms later).
func bothSeen(t *testing.T, a, b *greeter, seenA, seenB chan *server.Current) string {
	t.Helper()
	first := ""
	tm := time.NewTimer(live)
	defer tm.Stop()
	for gotA, gotB := false, false; !gotA || !gotB; {
		select {
		case <-seenA:
			gotA = true
			if first == "" {
				first = a.addr
			}
		case <-seenB:
			gotB = true
			if first == "" {
				first = b.addr
			}
		case <-tm.C:
			t.Fatalf("the primary and its backup did not both reach the servers within %v (a: %v, b: %v)", live, gotA, gotB)
		}
	}
	return first
}

func wantCancelledAt(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var ce *communicator.CallError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &ce) {
		t.Fatalf("%s: err = %v, want a CallError matching context.Canceled", what, err)
	}
	for _, w := range want {
		if ce.Endpoint == w {
			return
		}
	}
	t.Errorf("%s: error %q names endpoint %q, want one of %q", what, err, ce.Endpoint, want)
}

// TestSyncBackupCancelNamesEndpoint: a sync call whose backup went out (both requests are
// in the servers' handlers) is cancelled: its error names the endpoint of the primary request
// (race reads c.SentTo(), c2's if c has none).
func TestSyncBackupCancelNamesEndpoint(t *testing.T) {
	a, b, seenA, seenB, sp := backupPairOfBlockers(t)
	for i := range 3 {
		ctx, cancel := context.WithCancel(testCtx(t))
		errc := make(chan error, 1)
		go func() {
			_, err := sayHello(ctx, sp, "s", uint64(i))
			errc <- err
		}()
		first := bothSeen(t, a, b, seenA, seenB)
		cancel()
		err := waitErr(errc, live, "cancelled sync backup pair")
		wantCancelledAt(t, "sync call cancelled after its backup went out", err, first)
	}
	if bs := sp.BackupStats(); bs.Sent < 3 {
		t.Fatalf("backups %+v: want every call's backup sent", bs)
	}
}

// TestAsyncBackupCancelNamesEndpoint is the async twin: cancelAsync reads the primary's
// SentTo before asyncBackup.cancel.
func TestAsyncBackupCancelNamesEndpoint(t *testing.T) {
	a, b, seenA, seenB, sp := backupPairOfBlockers(t)
	for i := range 3 {
		ctx, cancel := context.WithCancel(testCtx(t))
		done, err := asyncHello(t, ctx, sp, "a", uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		first := bothSeen(t, a, b, seenA, seenB)
		cancel()
		err = waitErr(done, live, "cancelled async backup pair")
		wantCancelledAt(t, "async call cancelled after its backup went out", err, first)
	}
	if bs := sp.BackupStats(); bs.Sent < 3 {
		t.Fatalf("backups %+v: want every call's backup sent", bs)
	}
}

// TestFutureCancelNamesEndpoint: a future made with a cancellable ctx, the request in the
// server's handler, ctx cancelled: the future's error (Get with another ctx, and with the
// call's own) names the endpoint. With and without a backup request.
func TestFutureCancelNamesEndpoint(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		seen := make(chan *server.Current, 4)
		g := startGreeter(t, "a", serverOpt{block: true, seen: seen})
		comm := newComm(t, nil)
		sp := proxyTo(t, comm, g)
		prx := hellopb.NewGreeterProxy(sp)
		for i, style := range []string{"FutureInvoke Get(bg)", "FutureSayHello Get(ctx)"} {
			ctx, cancel := context.WithCancel(testCtx(t))
			var get func() error
			if i == 0 {
				f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "f", Seq: uint64(i)}, new(hellopb.HelloReply))
				get = func() error { _, err := f.Get(testCtx(t)); return err }
			} else {
				f := prx.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "f", Seq: uint64(i)})
				get = func() error { _, err := f.Get(ctx); return err }
			}
			select {
			case <-seen:
			case <-time.After(live):
				cancel()
				t.Fatal("the server did not get the request")
			}
			cancel()
			wantCancelledAt(t, "future "+style, get(), g.addr)
		}
	})
	t.Run("backup", func(t *testing.T) {
		a, b, seenA, seenB, sp := backupPairOfBlockers(t)
		ctx, cancel := context.WithCancel(testCtx(t))
		f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "f", Seq: 9}, new(hellopb.HelloReply))
		first := bothSeen(t, a, b, seenA, seenB)
		cancel()
		_, err := f.Get(testCtx(t))
		wantCancelledAt(t, "future with a backup, cancelled after the backup went out", err, first)
	})
}

// TestParkedCancelNamesNoEndpoint: a call cancelled while its servant waits for its first
// endpoint list was sent nowhere: its error names no endpoint. Each round first makes calls
// to a greeter with cancellable contexts (KeepAddr: their pooled Calls had an address
// published), some answered, one cancelled while sent (recycled by the loop), then from the same
// goroutine a sync and an async call of a servant with no list yet, both cancelled: the pooled
// Call a parked call gets is likely one of those, and its SentTo must not be the old use's.
func TestParkedCancelNamesNoEndpoint(t *testing.T) {
	seen := make(chan *server.Current, 64)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	src := &pushSource{ready: make(chan struct{})}
	cfg := conf.Default()
	cfg.NetThread = 1
	comm, err := communicator.New(cfg, communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	direct := proxyTo(t, comm, g)
	parked, err := comm.Proxy("Test.Parked.GreeterObj")
	if err != nil {
		t.Fatal(err)
	}
	for round := range 40 {
		for i := range 4 {
			ctx, cancel := context.WithCancel(context.Background())
			if _, err := sayHello(ctx, direct, "w", uint64(i)); err != nil {
				cancel()
				t.Fatalf("round %d: warm call: %v", round, err)
			}
			cancel()
		}
		for len(seen) > 0 {
			<-seen
		}
		// The sync parked call.
		ctx, cancel := context.WithCancel(context.Background())
		tm := time.AfterFunc(2*time.Millisecond, cancel)
		_, err := sayHello(ctx, parked, "p", uint64(round))
		tm.Stop()
		cancel()
		wantCancelledAt(t, "sync call cancelled while its servant waits for its first list", err, "")
		// Warm again, then the async parked call.
		ctx, cancel = context.WithCancel(context.Background())
		_, _ = sayHello(ctx, direct, "w", 99)
		cancel()
		ctx, cancel = context.WithCancel(context.Background())
		done, err := asyncHello(t, ctx, parked, "p", uint64(round))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
		cancel()
		err = waitErr(done, live, "cancelled parked async call")
		wantCancelledAt(t, "async call cancelled while its servant waits for its first list", err, "")
		// A future too.
		ctx, cancel = context.WithCancel(context.Background())
		_, _ = sayHello(ctx, direct, "w", 98)
		cancel()
		ctx, cancel = context.WithCancel(context.Background())
		f := parked.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "p", Seq: uint64(round)}, new(hellopb.HelloReply))
		time.Sleep(time.Millisecond)
		cancel()
		_, err = f.Get(context.Background())
		wantCancelledAt(t, "future cancelled while its servant waits for its first list", err, "")
		if t.Failed() {
			return
		}
	}
}
