package communicator_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestStatsDuringAndAfterClose: 2 net threads, calls held by the server (so Close fails
// them with ErrClosed) and others answered, Stats called by 4 goroutines without pause while
// Close runs and after it, and the retention's sweep (10 ms) forgetting meanwhile. Run with
// -race: the final snapshots read the loop's state under own while nothing else may touch it.
// After Close, every Stats holds both threads, and the call counts are final: each call made
// counted once, the same in every later Stats; no counter of a snapshot taken after Close
// reads less than in one taken before.
func TestStatsDuringAndAfterClose(t *testing.T) {
	leakCheckEach(t)
	held := startGreeter(t, "held", serverOpt{block: true, hold: true})
	fast := startGreeter(t, "fast", serverOpt{})
	comm := newCommWith(t, func(c *conf.Config) {
		c.NetThread = 2
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin"}}
	}, communicator.WithStatsRetention(10*time.Millisecond))
	sp := proxyTo(t, comm, held, fast)
	ctx := testCtx(t)

	var made atomic.Int64
	var calls sync.WaitGroup
	defer calls.Wait()
	for i := range 40 {
		calls.Add(1)
		made.Add(1)
		go func() {
			defer calls.Done()
			_, _ = sayHello(ctx, sp, "c", uint64(i), servantproxy.WithTimeout(time.Minute))
		}()
	}
	waitFor(t, "calls held at the server", func() bool { return held.holding.Load() > 0 || pendingAt(comm, held.addr) > 0 })

	total := func(s stats.Snapshot) (n uint64) {
		for _, c := range s.Calls {
			n += c.Counters.Calls()
		}
		return n
	}
	before := comm.Stats()
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var lowered atomic.Int32
	for range 4 {
		readers.Go(func() {
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := comm.Stats()
				if len(s.Threads) == 2 {
					if n := total(s); n < last {
						lowered.Add(1)
					} else {
						last = n
					}
				}
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
	calls.Wait()
	time.Sleep(20 * time.Millisecond)
	close(stop)
	readers.Wait()

	first := comm.Stats()
	if len(first.Threads) != 2 {
		t.Fatalf("Stats after Close: %d threads, want 2", len(first.Threads))
	}
	if got := total(first); got != uint64(made.Load()) {
		t.Errorf("Stats after Close counts %d calls, %d were made (each ends once)", got, made.Load())
	}
	if total(first) < total(before) {
		t.Errorf("calls counted after Close %d < before it %d", total(first), total(before))
	}
	for i := range 3 {
		if s := comm.Stats(); total(s) != total(first) || len(s.Threads) != 2 {
			t.Fatalf("Stats %d after Close: %d calls on %d threads, first after Close %d on 2: not final", i+2, total(s), len(s.Threads), total(first))
		}
	}
	if n := lowered.Load(); n > 0 {
		t.Errorf("%d Stats with every thread counted fewer calls than an earlier one", n)
	}
}

func pendingAt(c *communicator.Communicator, addr string) (n int) {
	for _, e := range c.Stats().Endpoints {
		if e.Endpoint == addr {
			n += e.Pending
		}
	}
	return n
}
