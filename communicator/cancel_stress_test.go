package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// A stress of the call state word's one transition out of pending per use (Complete
// moves it to the next generation; AbandonGen and DropGen take the generation read before the
// submit) and of SentTo (published only with KeepAddr). Many goroutines make sync, async and
// future calls, with and without backup requests, with contexts cancelled at random moments
// (before the call, while it is queued or on the wire, around its reply, after it), or ending by
// their deadline, plus calls of a servant that never gets an endpoint list (parked, then
// cancelled: their errors must name no endpoint, though the pooled Calls they get were just used,
// with an address, by the others). Every call must end exactly once (each async callback once),
// none may hang, and the accounting must be right once all have ended: Stats counts each call
// once, with the outcome its caller got, no endpoint has a call pending, and Inflight is 0.

const parkedServant = "Test.Parked.NeverListedObj"

// silentSource is a naming source that never answers: its servants' calls park until cancelled.
type silentSource struct{}

func (silentSource) Watch(naming.Query, func(naming.List)) func() { return func() {} }

type callTally struct {
	mu   sync.Mutex
	got  map[string]map[string]int // servant -> outcome -> calls
	made map[string]int
}

func (r *callTally) add(servant, outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got[servant] == nil {
		r.got[servant] = map[string]int{}
	}
	r.got[servant][outcome]++
	r.made[servant]++
}

func outcomeOf(err error) string {
	switch {
	case err == nil:
		return stats.OK.String()
	case errors.Is(err, communicator.ErrTimeout):
		return stats.Timeout.String()
	case errors.Is(err, context.Canceled):
		return stats.Cancelled.String()
	case errors.Is(err, communicator.ErrNoEndpoint):
		return stats.NoEndpoint.String()
	}
	return "other: " + err.Error()
}

func TestCancelStress(t *testing.T) {
	a, b := startSoakServer(t), startSoakServer(t)
	t.Cleanup(func() { a.stop(t); b.stop(t) })
	servers := map[string]bool{a.addr: true, b.addr: true}
	mk := func(backup bool) *communicator.Communicator {
		return newCommWith(t, func(c *conf.Config) {
			c.NetThread = 2
			c.TimeoutCheckInterval = 5 * time.Millisecond
			s := conf.Servant{LoadBalance: "roundrobin", MaxInflight: 1 << 20}
			if backup {
				s.BackupRequest, s.BackupBudget, s.Idempotent = 2*time.Millisecond, 1, []string{"SayHello"}
			}
			c.Servants = map[string]conf.Servant{soakServant: s, parkedServant: s}
		}, communicator.WithLogger(zap.NewNop()), communicator.WithNaming(silentSource{}))
	}
	type target struct {
		name   string
		comm   *communicator.Communicator
		sp     *servantproxy.ServantProxy
		parked *servantproxy.ServantProxy
		tally  *callTally
	}
	var targets []*target
	for _, backup := range []bool{false, true} {
		comm := mk(backup)
		sp, err := comm.Proxy(soakServant + "@" + tcpEndpoint(a.addr) + ":" + tcpEndpoint(b.addr))
		if err != nil {
			t.Fatal(err)
		}
		parked, err := comm.Proxy(parkedServant)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, &target{name: fmt.Sprintf("backup=%v", backup), comm: comm, sp: sp, parked: parked,
			tally: &callTally{got: map[string]map[string]int{}, made: map[string]int{}}})
	}

	const workers, perWorker = 32, 400
	var (
		wg       sync.WaitGroup
		problems sync.Map // string -> struct{}
		nprob    atomic.Int32
		asyncRun []*atomic.Int32 // callback runs of every async call
		asyncMu  sync.Mutex
		finished atomic.Int64
	)
	problem := func(format string, args ...any) {
		if nprob.Add(1) <= 20 {
			problems.Store(fmt.Sprintf(format, args...), struct{}{})
		}
	}
	delays := []string{"d0s", "d1ms", "d3ms", "d8ms", "d20ms"}

	one := func(rng *rand.Rand, tg *target, w, i int) {
		parked := rng.IntN(10) == 0
		sp, servantName := tg.sp, soakServant
		if parked {
			sp, servantName = tg.parked, parkedServant
		}
		name := delays[rng.IntN(len(delays))]
		seq := uint64(w*perWorker + i)
		req := &hellopb.HelloRequest{Name: name, Seq: seq}

		// The context: pre-cancelled, cancelled at a random moment, cancelled after the call, or
		// ending by its deadline. A parked call always ends by one of its ctx's ends.
		ctx, cancel := context.WithCancel(context.Background())
		var tm *time.Timer
		mode := rng.IntN(5)
		if parked && mode == 3 {
			mode = 1
		}
		switch mode {
		case 0:
			cancel()
		case 1, 2:
			tm = time.AfterFunc(time.Duration(rng.IntN(25000))*time.Microsecond, cancel)
		case 3: // cancelled after the call ended (below)
		case 4:
			var c2 context.CancelFunc
			ctx, c2 = context.WithTimeout(ctx, time.Duration(1+rng.IntN(30))*time.Millisecond)
			defer c2()
		}
		defer cancel()
		if tm != nil {
			defer tm.Stop()
		}

		var err error
		kind := rng.IntN(3)
		switch kind {
		case 0:
			err = sp.Invoke(ctx, "SayHello", req, new(hellopb.HelloReply))
		case 1:
			runs := new(atomic.Int32)
			asyncMu.Lock()
			asyncRun = append(asyncRun, runs)
			asyncMu.Unlock()
			done := make(chan error, 2)
			if err = sp.AsyncInvoke(ctx, "SayHello", req, new(hellopb.HelloReply), func(err error) {
				runs.Add(1)
				done <- err
				if mode == 3 {
					cancel() // cancelled as the callback runs
				}
			}); err != nil {
				runs.Add(1) // refused: no callback, counts as its one end
				break
			}
			select {
			case err = <-done:
			case <-time.After(live):
				problem("%s: async call %s/%d (mode %d, parked %v): no callback within %v", tg.name, name, seq, mode, parked, live)
				return
			}
		case 2:
			f := sp.FutureInvoke(ctx, "SayHello", req, new(hellopb.HelloReply))
			gctx, gcancel := context.WithTimeout(context.Background(), live)
			_, err = f.Get(gctx)
			gcancel()
			if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, communicator.ErrTimeout) {
				problem("%s: future %s/%d (mode %d, parked %v): not completed within %v", tg.name, name, seq, mode, parked, live)
				return
			}
		}
		cancel()
		out := outcomeOf(err)
		tg.tally.add(servantName, out)
		if out == stats.NoEndpoint.String() {
			// Both servants' calls have an endpoint, or wait for one: none ends for want of one
			// (a backup that found none ends with its first call's outcome: call.Pair.Unsent).
			problem("%s: call %s/%d (kind %d, mode %d, parked %v) ended with %v", tg.name, name, seq, kind, mode, parked, err)
		}
		if strings.HasPrefix(out, "other") {
			problem("%s: call %s/%d (mode %d, parked %v): unexpected error %v", tg.name, name, seq, mode, parked, err)
		}
		var ce *communicator.CallError
		if err != nil && errors.As(err, &ce) {
			switch {
			case parked && ce.Endpoint != "":
				problem("%s: parked call %d (never sent) ended with %q, naming endpoint %q", tg.name, seq, err, ce.Endpoint)
			case !parked && ce.Endpoint != "" && !servers[ce.Endpoint]:
				problem("%s: call %d ended with %q, naming endpoint %q, none of its servant's", tg.name, seq, err, ce.Endpoint)
			}
		}
	}

	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for i := range perWorker {
				one(rng, targets[(w+i)%2], w, i)
				finished.Add(1)
			}
		})
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	const bound = 90 * time.Second // a liveness bound: the calls take a few seconds under -race
	select {
	case <-allDone:
	case <-time.After(bound):
		t.Fatalf("%d of %d calls ended within %v: a call hangs\n%s", finished.Load(), workers*perWorker, bound, allStacks())
	}
	t.Logf("%d calls in %v", workers*perWorker, time.Since(start))
	problems.Range(func(k, _ any) bool { t.Error(k); return true })
	if n := nprob.Load(); n > 20 {
		t.Errorf("... %d problems in all", n)
	}

	// Every async callback ran exactly once (a late second run is given time to show).
	time.Sleep(200 * time.Millisecond)
	for i, r := range asyncRun {
		if n := r.Load(); n != 1 {
			t.Errorf("async call %d: callback ran %d times, want once", i, n)
		}
	}

	// The accounting, once every request has ended on the loops.
	for _, tg := range targets {
		waitFor(t, tg.name+": no call pending on any endpoint, Inflight 0", func() bool {
			for _, e := range tg.comm.Stats().Endpoints {
				if e.Pending != 0 {
					return false
				}
			}
			return tg.sp.Inflight() == 0 && tg.parked.Inflight() == 0
		})
		time.Sleep(100 * time.Millisecond)
		snap := tg.comm.Stats()
		for _, sv := range []string{soakServant, parkedServant} {
			var tot stats.Counters
			for _, c := range snap.Calls {
				if c.Servant == sv {
					for r, n := range c.Results {
						tot.Results[r] += n
					}
				}
			}
			counted := resultsOf(tot)
			tg.tally.mu.Lock()
			made, got := tg.tally.made[sv], tg.tally.got[sv]
			tg.tally.mu.Unlock()
			t.Logf("%s %s: %d calls made, callers got %v; Stats counts %d: %v; backups %+v", tg.name, sv, made, got, tot.Calls(), counted, tg.sp.BackupStats())
			if tot.Calls() != uint64(made) {
				t.Errorf("%s %s: %d calls made, Stats counts %d %v", tg.name, sv, made, tot.Calls(), counted)
			}
			for _, r := range []stats.Result{stats.OK, stats.Timeout, stats.Cancelled, stats.NoEndpoint} {
				if uint64(got[r.String()]) != counted[r.String()] {
					t.Errorf("%s %s: callers got %d %s, Stats counts %d", tg.name, sv, got[r.String()], r, counted[r.String()])
				}
			}
		}
	}
}
