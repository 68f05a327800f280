package communicator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestBackupWaitsPastARefusal: backup requests (sync and async calls alike) are to shorten the
// tail ("the first reply wins"). Two endpoints: A healthy but slow (100 ms), B overloaded (its one worker held and
// its queue of one full: it refuses every call with -9 at once, without running it). A call whose
// primary goes to A gets, after the backup delay (10 ms), a backup to B, which B refuses at once;
// that refusal is taken as the call's reply, and the caller gets -9 "overloaded" at 10 ms, while A
// runs the call and answers it OK at 100 ms. Without backups the same call succeeds: the backup
// turned a success into an overload error. A -9 is a refusal of a call that did not run, as the
// client itself treats a stopping server's -9 (moved elsewhere) and a backup's transport failure
// (the other half may still answer): a backup's -9 now waits for the primary the same way.
// Before, 4 or 5 of 6 such calls failed with B's -9 (found by a review of backpressure), and the
// backup stats counted each such refusal as a backup that won (no longer).
func TestBackupWaitsPastARefusal(t *testing.T) {
	var aEntered atomic.Int64
	_, aAddr := startEcho(t, "A", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		if string(req) != "hold" {
			aEntered.Add(1)
		}
		time.Sleep(100 * time.Millisecond)
		return append(rsp, req...), nil
	})

	release := make(chan struct{})
	var once sync.Once
	rel := func() { once.Do(func() { close(release) }) }
	entered := make(chan struct{}, 16)
	b, bAddr := startEcho(t, "B", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return append(rsp, req...), nil
	}, server.WithWorkers(1), server.WithQueueCap(1))
	t.Cleanup(rel)

	comm := newComm(t, func(c *conf.Config) {
		c.SyncInvokeTimeout = live
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: 10 * time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"Echo"}}}
	})
	ctx := testCtx(t)
	var filler servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+tcpEndpoint(bAddr), &filler); err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	for range 2 {
		held.Add(1)
		go func() {
			defer held.Done()
			_, _ = filler.InvokeRaw(ctx, "Echo", []byte("hold"), servantproxy.WithHash(1)) // hashed: no backup
		}()
	}
	t.Cleanup(func() { rel(); held.Wait() })
	select {
	case <-entered:
	case <-time.After(live):
		t.Fatal("the first held call never reached B's handler")
	}
	// tars_ping is answered by B's loop once it has read what came before it on the connection:
	// the second held call is in B's queue then, and B refuses what comes next.
	if err := filler.Ping(ctx, servantproxy.WithHash(1)); err != nil {
		t.Fatalf("ping B behind the held calls: %v", err)
	}

	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+tcpEndpoint(aAddr)+":"+tcpEndpoint(bAddr), &sp); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i := range 6 {
		before := aEntered.Load()
		start := time.Now()
		var err error
		if i%2 == 0 {
			_, err = sp.InvokeRaw(ctx, "Echo", []byte("x"))
		} else { // async: the same rule (backup_async.go)
			done := make(chan error, 1)
			if err = sp.AsyncInvokeRaw(ctx, "Echo", []byte("x"), func(_ []byte, err error) { done <- err }); err == nil {
				select {
				case err = <-done:
				case <-time.After(live):
					t.Fatalf("call %d: no callback", i)
				}
			}
		}
		took := time.Since(start)
		time.Sleep(150 * time.Millisecond) // A's handler has run; B's overload backoff (10 ms, 20 ms) is over
		ranOnA := aEntered.Load() > before
		se, isSE := errors.AsType[*servantproxy.ServerError](err)
		t.Logf("call %d (%s): ran on A %v, took %v, err %v", i, []string{"sync", "async"}[i%2], ranOnA, took.Round(time.Millisecond), err)
		if ranOnA && isSE && se.Code == codec.RetOverload {
			lost++
		}
	}
	t.Logf("B refused %d requests (-9, queue full); backups: %+v", b.LimitStats().QueueFull, sp.BackupStats())
	if lost > 0 {
		t.Errorf("%d calls ran on A (and A answered them OK) but their callers got B's -9 refusal of the backup: a backup request made the call fail", lost)
	}
}
