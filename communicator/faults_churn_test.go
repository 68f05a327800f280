package communicator_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/stats"
)

// TestFaultsChurnStatsAddUp (a guard, passed when written) resets every connection of two endpoints every 25 ms while
// sync and async callers call continuously. Every call must end once, within its deadline plus
// slack, with its own reply or a timeout / connection error; and Stats must count each call once
// under the result its caller saw (ok, timeout, connection). (A guard: passes; no fault test
// compares Stats' results with what the callers saw under connection churn.)
func TestFaultsChurnStatsAddUp(t *testing.T) {
	const (
		callers = 6
		runFor  = 2 * time.Second
		timeout = 300 * time.Millisecond
	)
	a, b := startFaultEP(t, "a"), startFaultEP(t, "b")
	a.g.seqDelay.Store(true)
	b.g.seqDelay.Store(true)
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.NetThread = 2
		c.SyncInvokeTimeout = timeout
		c.AsyncInvokeTimeout = timeout
		c.Health.TryInterval = 50 * time.Millisecond
	}))
	sp := proxyToEPs(t, comm, a, b)
	ctx := context.Background()

	var (
		mu       sync.Mutex
		saw      = map[string]int{}
		bad      []string
		seq      atomic.Uint64
		asyncWG  sync.WaitGroup
		callerWG sync.WaitGroup
		stop     = make(chan struct{})
	)
	record := func(kind string, err error, took time.Duration) {
		c := classify(err)
		mu.Lock()
		defer mu.Unlock()
		saw[c]++
		if c != "ok" && c != "timeout" && c != "connection" {
			bad = append(bad, fmt.Sprintf("%s: unexpected error %v", kind, err))
		}
		if took > timeout+live { // a liveness bound: the promise is the deadline plus one tick
			bad = append(bad, fmt.Sprintf("%s: ended %v after it began, past its %v deadline (err %v)", kind, took, timeout, err))
		}
	}
	for i := range callers {
		callerWG.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := seq.Add(1)
				start := time.Now()
				if i%2 == 0 {
					_, err := sayHello(ctx, sp, "s", n)
					record("sync", err, time.Since(start))
					continue
				}
				rsp := new(hellopb.HelloReply)
				var runs atomic.Int32
				done := make(chan struct{})
				asyncWG.Add(1)
				err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "a", Seq: n}, rsp, func(err error) {
					if runs.Add(1) > 1 {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("async %d: callback ran twice", n))
						mu.Unlock()
						return
					}
					if err == nil {
						_, err = checkReply(rsp, "a", n)
					}
					record("async", err, time.Since(start))
					asyncWG.Done()
					close(done)
				})
				if err != nil {
					asyncWG.Done()
					record("async-refused", err, 0)
					continue
				}
				<-done
			}
		})
	}
	deadline := time.Now().Add(runFor)
	for i := 0; time.Now().Before(deadline); i++ {
		time.Sleep(25 * time.Millisecond)
		[]*faultEP{a, b}[i%2].p.Cut()
	}
	close(stop)
	callerWG.Wait()
	asyncWG.Wait()

	var tot stats.Counters
	for _, c := range comm.Stats().Calls {
		if c.Servant == servant && c.Function == "SayHello" {
			for r, n := range c.Results {
				tot.Results[r] += n
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range bad[:min(len(bad), 10)] {
		t.Error(s)
	}
	t.Logf("callers saw %v (%d calls); Stats counted ok %d, timeout %d, connection %d, all %d",
		saw, seq.Load(), tot.Results[stats.OK], tot.Results[stats.Timeout], tot.Results[stats.Connection], tot.Calls())
	// The churn must have cut calls (on a busy machine it may leave no call a success: the
	// accounting below holds either way).
	if saw["connection"]+saw["timeout"] == 0 {
		t.Fatalf("the churn ended no call with a connection error or a timeout: %v", saw)
	}
	for _, x := range []struct {
		name string
		r    stats.Result
	}{{"ok", stats.OK}, {"timeout", stats.Timeout}, {"connection", stats.Connection}} {
		if got := tot.Results[x.r]; got != uint64(saw[x.name]) {
			t.Errorf("Stats counts %d calls as %s, the callers saw %d", got, x.name, saw[x.name])
		}
	}
	if got := tot.Calls(); got != seq.Load() {
		t.Errorf("Stats counts %d calls in all, the callers made %d", got, seq.Load())
	}
}
