package communicator_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// TestSyncBackupCancelAfterReply: a sync call whose backup's reply has completed (the loop
// delivered it and counted it OK) does not then end with context.Canceled because the caller's
// ctx was cancelled a moment later, as a call without a backup does not (cancelWait takes the
// completed reply). The backup pair dropped it. Every reply the loop counted OK from endpoint b
// must be a success its caller saw.
func TestSyncBackupCancelAfterReply(t *testing.T) {
	a := startTGreeter(t, "a")
	a.hold.Store(int64(time.Second)) // the primary on a never answers in time
	seen := make(chan *server.Current, 1)
	b := startGreeter(t, "b", serverOpt{seen: seen})
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: 2 * time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	}))
	sp := proxyToAddrs(t, comm, a.endpoint(), b.endpoint())

	type res struct {
		from string
		err  error
	}
	const n = 600
	okB, cancelled := 0, 0
	for i := range n {
		select {
		case <-seen:
		default:
		}
		ctx, cancel := context.WithCancel(context.Background())
		resc := make(chan res, 1)
		go func() {
			from, err := sayHello(ctx, sp, "x", uint64(i))
			resc <- res{from, err}
		}()
		var r res
		got := false
		tm := time.NewTimer(200 * time.Millisecond)
		select {
		case <-seen: // b's handler runs: its reply is about to reach the client
			spin := time.Duration(rand.IntN(400)) * time.Microsecond
			for t0 := time.Now(); time.Since(t0) < spin; {
			}
			cancel()
		case r = <-resc:
			got = true
		case <-tm.C:
			cancel()
		}
		tm.Stop()
		if !got {
			select {
			case r = <-resc:
			case <-time.After(5 * time.Second):
				t.Fatalf("call %d did not return", i)
			}
		}
		cancel()
		switch {
		case r.err == nil && r.from == "b":
			okB++
		case errors.Is(r.err, context.Canceled):
			cancelled++
		}
	}
	time.Sleep(300 * time.Millisecond) // b's replies (all within ms) have been counted
	var recorded uint64
	for _, c := range comm.Stats().Calls {
		if c.Key.Servant == servant && c.Key.Endpoint == b.addr {
			recorded += c.Counters.Results[stats.OK]
		}
	}
	t.Logf("b replies counted OK %d, successes from b seen by callers %d, cancelled %d, backups %+v",
		recorded, okB, cancelled, sp.BackupStats())
	if recorded != uint64(okB) {
		t.Errorf("%d replies of b were completed (counted OK) but their callers got context.Canceled instead",
			recorded-uint64(okB))
	}
}
