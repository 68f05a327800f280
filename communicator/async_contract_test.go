package communicator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/future"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// The async contract (issue 16 item 1): an AsyncInvoke (or FutureInvoke) that returns nil gets
// exactly one callback, one that returns an error gets none; no path leaks an async reservation
// or a max-inflight slot; Close returns.
//
// TestAsyncContract drives that contract on the public API where it used to break: tiny queues
// (queue-cap 1: Thread.Submit refuses most calls), context deadlines of microseconds to
// milliseconds (they fire while a call is being submitted), max-inflight, and Close in the middle
// of the traffic. Every call gets an id; every callback is counted against its id. Each round
// first runs traffic and waits for every accepted call to call back (then max-inflight must be
// back to 0, and a plain call must go through), then runs traffic again and closes the
// Communicator under it: Close must return within a bound (else the test fails with every
// goroutine's stack), and once it has, every accepted call has had exactly one callback.
func TestAsyncContract(t *testing.T) {
	cases := []struct {
		name        string
		queueCap    int
		maxInflight int
		callers     int
		minDeadline time.Duration
		maxDeadline time.Duration
	}{
		// The reproducers: each lost callbacks, leaked slots, or hung Close.
		{"queuecap1-us", 1, 0, 64, time.Microsecond, 40 * time.Microsecond},
		{"queuecap1-us-maxinflight", 1, 50, 64, time.Microsecond, 40 * time.Microsecond},
		{"queuecap1-ms", 1, 0, 24, time.Millisecond, 50 * time.Millisecond},
		{"queuecap1-200ms", 1, 0, 24, time.Microsecond, 200 * time.Millisecond},
		{"bigqueue-us", 100000, 0, 8, time.Microsecond, 40 * time.Microsecond},
		{"bigqueue-ms-maxinflight", 100000, 20, 16, time.Microsecond, 20 * time.Millisecond},
	}
	g := startGreeter(t, "g", serverOpt{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := conf.Default()
			cfg.NetThread = 2
			cfg.AsyncThread = 2
			cfg.QueueCap = tc.queueCap
			cfg.AsyncQueueCap = 64
			cfg.TimeoutCheckInterval = 2 * time.Millisecond
			if tc.maxInflight > 0 {
				cfg.Servants = map[string]conf.Servant{servant: {MaxInflight: tc.maxInflight}}
			}
			comm, err := communicator.New(cfg, communicator.WithLogger(zap.NewNop()))
			if err != nil {
				t.Fatal(err)
			}
			sp := proxyTo(t, comm, g)
			ledger := newAsyncLedger(1 << 20)
			run := func(d time.Duration, mid func()) {
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for i := range tc.callers {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
						for {
							select {
							case <-stop:
								return
							default:
							}
							span := int64(tc.maxDeadline - tc.minDeadline)
							ledger.call(sp, tc.minDeadline+time.Duration(rng.Int64N(span+1)), rng.IntN(3) == 0)
						}
					})
				}
				time.Sleep(d)
				if mid != nil {
					mid()
				}
				close(stop)
				wg.Wait()
			}

			// Phase 1: traffic, then every accepted call must call back and every slot return.
			run(300*time.Millisecond, nil)
			if !ledger.settled(10 * time.Second) {
				t.Errorf("phase 1: %s", ledger.missing())
				closeBounded(t, comm, 20*time.Second)
				t.FailNow()
			}
			if n := sp.Inflight(); n != 0 {
				t.Errorf("phase 1: Inflight() = %d after every callback ran, want 0", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err = sayHello(ctx, sp, "after", 1)
			cancel()
			if err != nil {
				t.Errorf("phase 1: a call after the traffic: %v", err)
			}

			// Phase 2: traffic with Close in the middle.
			run(200*time.Millisecond, func() { closeBounded(t, comm, 20*time.Second) })
			if t.Failed() {
				t.FailNow()
			}
			// Close has returned: every accepted call has had its callback, none more than one.
			if m := ledger.check(); m != "" {
				t.Fatalf("phase 2, after Close returned: %s", m)
			}
			if n := sp.Inflight(); n != 0 {
				t.Errorf("phase 2: Inflight() = %d after Close, want 0", n)
			}
			acc, ref := ledger.accepted.Load(), ledger.refused.Load()
			if acc == 0 || ref == 0 {
				// The round must exercise both outcomes, or it proves nothing.
				t.Errorf("%d calls accepted, %d refused: the round did not exercise both", acc, ref)
			}
			t.Logf("%d calls accepted (exactly one callback each), %d refused (none)", acc, ref)
		})
	}
}

// asyncLedger counts the callbacks of every async and future call by id.
type asyncLedger struct {
	ids       atomic.Int64
	runs      []atomic.Int32 // callbacks run, by id
	refusedID []atomic.Bool  // the call's AsyncInvoke returned an error
	accepted  atomic.Int64
	refused   atomic.Int64
	callbacks atomic.Int64
	wrong     atomic.Value // the first callback or refusal with an unexpected error
	futures   sync.Map     // id -> *future.Future[proto.Message], of accepted future calls
}

func newAsyncLedger(n int) *asyncLedger {
	return &asyncLedger{runs: make([]atomic.Int32, n), refusedID: make([]atomic.Bool, n)}
}

// call makes one async (or, if fut, future) call with a context deadline of d and accounts for
// it. It does nothing once the ledger is full.
func (l *asyncLedger) call(sp *servantproxy.ServantProxy, d time.Duration, fut bool) {
	id := l.ids.Add(1) - 1
	if id >= int64(len(l.runs)) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	req := &hellopb.HelloRequest{Name: "a", Seq: uint64(id)}
	rsp := new(hellopb.HelloReply)
	done := func(err error) {
		defer cancel()
		if l.runs[id].Add(1) == 1 {
			l.callbacks.Add(1)
		}
		if err == nil {
			_, err = checkReply(rsp, "a", uint64(id))
			if err != nil {
				l.wrong.CompareAndSwap(nil, err)
			}
			return
		}
		if !isOneOf(err, communicator.ErrTimeout, communicator.ErrClosed, communicator.ErrQueueFull, communicator.ErrOverload) {
			l.wrong.CompareAndSwap(nil, fmt.Errorf("call %d called back with %w", id, err))
		}
	}
	var err error
	if fut {
		f := sp.FutureInvoke(ctx, "SayHello", req, rsp)
		if v, ferr, ok := f.Result(); ok && ferr != nil && v == nil {
			// Completed at once with an error: refused (or failed before AsyncInvoke returned,
			// which a future cannot tell apart: count it as refused, and the future as done).
			err = ferr
		} else {
			l.futures.Store(id, f)
			f.OnDone(func(_ proto.Message, err error) { done(err) })
		}
	} else {
		err = sp.AsyncInvoke(ctx, "SayHello", req, rsp, done)
	}
	if err != nil {
		cancel()
		l.refused.Add(1)
		l.refusedID[id].Store(true)
		if !isOneOf(err, communicator.ErrTimeout, communicator.ErrClosed, communicator.ErrQueueFull, communicator.ErrOverload) {
			l.wrong.CompareAndSwap(nil, fmt.Errorf("call %d refused with %w", id, err))
		}
		return
	}
	l.accepted.Add(1)
}

// settled waits up to limit for every accepted call to have called back.
func (l *asyncLedger) settled(limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if l.callbacks.Load() == l.accepted.Load() {
			return l.check() == ""
		}
	}
	return false
}

// check returns what breaks the contract so far ("" for nothing).
func (l *asyncLedger) check() string {
	n := min(l.ids.Load(), int64(len(l.runs)))
	var missing, twice, refusedRan []int64
	for id := range n {
		runs, refused := l.runs[id].Load(), l.refusedID[id].Load()
		switch {
		case refused && runs != 0:
			refusedRan = append(refusedRan, id)
		case !refused && runs == 0:
			missing = append(missing, id)
		case runs > 1:
			twice = append(twice, id)
		}
	}
	var bad []string
	if len(missing) > 0 {
		bad = append(bad, fmt.Sprintf("%d accepted calls never called back (ids %v)", len(missing), head(missing)))
	}
	if len(twice) > 0 {
		bad = append(bad, fmt.Sprintf("%d calls called back more than once (ids %v)", len(twice), head(twice)))
	}
	if len(refusedRan) > 0 {
		bad = append(bad, fmt.Sprintf("%d refused calls called back (ids %v)", len(refusedRan), head(refusedRan)))
	}
	if e, _ := l.wrong.Load().(error); e != nil {
		bad = append(bad, e.Error())
	}
	unfinished := 0
	l.futures.Range(func(_, f any) bool {
		if !f.(*future.Future[proto.Message]).Done() {
			unfinished++
		}
		return true
	})
	if unfinished > 0 {
		bad = append(bad, fmt.Sprintf("%d accepted futures never completed", unfinished))
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("%v (of %d accepted, %d refused)", bad, l.accepted.Load(), l.refused.Load())
}

func (l *asyncLedger) missing() string {
	if m := l.check(); m != "" {
		return m
	}
	return fmt.Sprintf("%d of %d accepted calls called back", l.callbacks.Load(), l.accepted.Load())
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 10)] }

// closeBounded closes comm, failing the test with every goroutine's stack if Close has not
// returned within limit.
func closeBounded(t *testing.T, comm *communicator.Communicator, limit time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- comm.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(limit):
		t.Errorf("Close did not return within %v; goroutines:\n%s", limit, allStacks())
	}
}
