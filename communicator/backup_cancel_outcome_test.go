package communicator_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestBackupCancelOutcomeCounted: a call with a backup request whose two requests
// have both failed (here both timed out at the call's own deadline, which the loop counts as
// the pair's outcome: "timeout") while its caller's ctx is cancelled at about the same moment.
// README: "Stats counts the pair as one call (its reply, or without one the outcome the caller
// got)". So, once every call has ended, the results Stats counts must be the outcomes the
// callers got. A plain call whose outcome came as its ctx ended returns that outcome
// (cancelWait), and so does a backup pair now. Before, the pair threw a failure that had already
// come away and returned the ctx's error (race, and asyncBackup.cancel when the first request
// failed first), though the loop had already counted that failure: Stats said "timeout" for
// calls whose callers got "cancelled".
func TestBackupCancelOutcomeCounted(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{block: true, hold: true}) // never answers in time
	b := startGreeter(t, "b", serverOpt{block: true, hold: true})
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.TimeoutCheckInterval = 5 * time.Millisecond
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	})
	sp := proxyTo(t, comm, a, b)
	// Warm the connections up (the calls time out).
	for i := range 4 {
		_, _ = sayHello(context.Background(), sp, "warm", uint64(i), servantproxy.WithTimeout(20*time.Millisecond))
	}

	// Rounds of n calls, until the callers have got a cancellation that Stats does not count
	// (the window is narrow: some rounds see none).
	const n = 400
	const d = 40 * time.Millisecond
	saw, counted := map[string]int{}, map[string]int{}
	for round := 0; round < 20 && saw["cancelled"] <= counted["cancelled"]; round++ {
		s0 := comm.Stats()
		before := s0.Total()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				// Cancelled around the call's own deadline (d, swept every 5 ms).
				tm := time.AfterFunc(d+time.Duration(rand.IntN(6000))*time.Microsecond, cancel)
				defer tm.Stop()
				var err error
				if i%2 == 0 {
					_, err = sayHello(ctx, sp, "x", uint64(i), servantproxy.WithTimeout(d))
				} else {
					done := make(chan error, 1)
					if err = sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x", Seq: uint64(i)}, new(hellopb.HelloReply),
						func(err error) { done <- err }, servantproxy.WithTimeout(d)); err == nil {
						select {
						case err = <-done:
						case <-time.After(10 * time.Second):
							err = errors.New("no callback within 10s")
						}
					}
				}
				c := "other: " + errString(err)
				switch {
				case errors.Is(err, communicator.ErrTimeout):
					c = "timeout"
				case errors.Is(err, context.Canceled):
					c = "cancelled"
				}
				mu.Lock()
				saw[c]++
				mu.Unlock()
			})
		}
		wg.Wait()
		// Every request has ended at its deadline; the loop counted each pair by then.
		var got stats.Counters
		waitFor(t, "Stats to count every call", func() bool {
			s := comm.Stats()
			got = s.Total()
			return got.Calls()-before.Calls() >= n
		})
		counted["timeout"] += int(got.Results[stats.Timeout] - before.Results[stats.Timeout])
		counted["cancelled"] += int(got.Results[stats.Cancelled] - before.Results[stats.Cancelled])
		counted["all"] += int(got.Calls() - before.Calls())
		t.Logf("round %d: callers got %v so far; Stats counts %v; backups %+v", round, saw, counted, sp.BackupStats())
	}
	// Each pair is counted once, by the outcome its caller got.
	if saw["cancelled"] != counted["cancelled"] || saw["timeout"] != counted["timeout"] {
		t.Errorf("callers got %d cancellations (and %d timeouts), Stats counts %d cancelled (and %d timeouts): "+
			"want Stats to count the outcome each caller got, once",
			saw["cancelled"], saw["timeout"], counted["cancelled"], counted["timeout"])
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
