package communicator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestBackupDeadlineIsTimeout (found by TestCancelStress): a call of a backup-request servant that waits for its first
// endpoint list and whose ctx deadline passes must end with ErrTimeout, as the same call without
// backup-request does. objectproxy.Backup.Route fails a backup made while the first call waits
// for the list with ErrNoEndpoint "at once; its caller is still waiting for the first call".
// But when the loop reaches the backup late (it was submitted >= 1ms before the deadline; a busy
// loop sweeps the first call's expiry, then drains the backup in the same turn), the backup's
// ErrNoEndpoint is the pair's later failure, which race/asyncBackup.end return: the caller gets
// "no endpoint for servant" for a call that timed out (and Stats counts no_endpoint). And a sync
// caller that woke to find both halves ended took them in select's random order, returning the
// backup's ErrNoEndpoint when the first call's timeout came later on the loop, as Stats counted
// it. Before, 59 of 14,400 such calls did so; now an unsent backup ends with the first call's
// failure when that one has failed already (call.Pair.Unsent), and the sync caller returns the
// half the pair counted (servantproxy's race).
func TestBackupDeadlineIsTimeout(t *testing.T) {
	comm := newCommWith(t, func(c *conf.Config) {
		c.NetThread = 1
		c.TimeoutCheckInterval = time.Millisecond
		c.Servants = map[string]conf.Servant{parkedServant: {BackupRequest: 2 * time.Millisecond, BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	}, communicator.WithLogger(zap.NewNop()), communicator.WithNaming(silentSource{}))
	sp, err := comm.Proxy(parkedServant)
	if err != nil {
		t.Fatal(err)
	}
	// Rounds until one shows it (the window is a loop turn late by a millisecond: most rounds
	// under -race on 2 cores do).
	var noEP, timeouts, other atomic.Int32
	var first atomic.Pointer[error]
	for round := 0; round < 6 && noEP.Load()+other.Load() == 0; round++ {
		var wg sync.WaitGroup
		for w := range 48 {
			wg.Go(func() {
				for i := range 150 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(3000+(w*37+i*53)%2000)*time.Microsecond)
					var err error
					if i%2 == 0 {
						err = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply))
					} else {
						done := make(chan error, 1)
						if err = sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply), func(err error) { done <- err }); err == nil {
							select {
							case err = <-done:
							case <-time.After(live):
								err = errors.New("no callback")
							}
						}
					}
					cancel()
					switch {
					case errors.Is(err, communicator.ErrTimeout):
						timeouts.Add(1)
					case errors.Is(err, communicator.ErrNoEndpoint):
						noEP.Add(1)
						first.CompareAndSwap(nil, &err)
					default:
						other.Add(1)
						first.CompareAndSwap(nil, &err)
					}
				}
			})
		}
		wg.Wait()
	}
	t.Logf("timeouts %d, no endpoint %d, other %d, backups %+v", timeouts.Load(), noEP.Load(), other.Load(), sp.BackupStats())
	if noEP.Load()+other.Load() > 0 {
		t.Errorf("%d of %d calls whose ctx deadline passed while their servant waited for its first list did not end with ErrTimeout (%d with ErrNoEndpoint); the first: %v",
			noEP.Load()+other.Load(), noEP.Load()+other.Load()+timeouts.Load(), noEP.Load(), *first.Load())
	}
}
