package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// stressLedger counts what the callers of TestExactlyOnceStress saw.
type stressLedger struct {
	started, ended atomic.Int64 // sync and one-way calls
	asyncAccepted  atomic.Int64 // AsyncInvoke returned nil
	asyncRefused   atomic.Int64 // AsyncInvoke returned an error
	callbacks      atomic.Int64 // callback runs
	duplicates     atomic.Int64 // callback runs beyond the first of a call
	afterClose     atomic.Int64 // callback runs that began after Close returned
	notClosedAfter atomic.Int64 // calls begun after Close returned that did not fail with ErrClosed
	closeReturned  atomic.Bool
	maxLate        atomic.Int64 // worst time a call ended after its deadline, ns
	mu             sync.Mutex
	outcomes       map[string]int // by kind and error class
	unexpected     []string       // the first few errors outside the allowed set
}

// classify names err's class, or "" if it is not one a call may end with.
func classify(err error) string {
	var se *communicator.ServerError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, communicator.ErrTimeout):
		return "timeout"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline" // the context expired before the call was sent
	case errors.Is(err, communicator.ErrConnection):
		return "connection"
	case errors.Is(err, communicator.ErrClosed):
		return "closed"
	case errors.Is(err, communicator.ErrQueueFull):
		return "queue-full"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &se):
		return fmt.Sprintf("server-%d", se.Code)
	}
	return ""
}

func (l *stressLedger) record(kind callKind, err error) {
	c := classify(err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if c == "" {
		if len(l.unexpected) < 10 {
			l.unexpected = append(l.unexpected, fmt.Sprintf("%s: %v", kind, err))
		}
		c = "unexpected"
	}
	l.outcomes[string(kind)+" "+c]++
}

// checkAfterClose records a call begun after Close returned that did not fail with ErrClosed (or
// with its context's error, which a call checks first).
func (l *stressLedger) checkAfterClose(afterClose bool, kind callKind, err error) {
	if !afterClose || isOneOf(err, communicator.ErrClosed, context.Canceled, context.DeadlineExceeded) {
		return
	}
	l.notClosedAfter.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.unexpected) < 10 {
		l.unexpected = append(l.unexpected, fmt.Sprintf("%s call begun after Close: %v, want ErrClosed", kind, err))
	}
}

// late records how long after its deadline a call ended.
func (l *stressLedger) late(d time.Duration) {
	for {
		old := l.maxLate.Load()
		if int64(d) <= old || l.maxLate.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// TestExactlyOnceStress mixes sync, async and one-way calls from many goroutines for a few
// seconds with random short timeouts and random context cancels, while a chaos goroutine cuts
// connections, black-holes, delays, corrupts and refuses on the three endpoints' proxies; then it
// closes the Communicator mid-flight. Every sync and one-way call returns exactly once, by its
// deadline (plus slack), with an error from the documented set; every async callback runs exactly
// once and never after Close returned; calls started equal calls completed; calls made after
// Close fail with ErrClosed; replies always answer their own request.
func TestExactlyOnceStress(t *testing.T) {
	const (
		callers   = 12
		runFor    = 2500 * time.Millisecond
		stressMin = 100                         // calls of each kind (sync and one-way; async) the stress must make
		lateness  = tick + 700*time.Millisecond // target of the deadline overshoot (a figure: see below)
	)
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	for _, e := range eps {
		e.g.seqDelay.Store(true)
	}
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.NetThread = 2
		c.AsyncQueueCap = 2000
		c.QueueCap = 5000
		c.Health.TryInterval = 100 * time.Millisecond
		c.Servants = map[string]conf.Servant{servant: {Retries: 1}}
	}))
	sp := proxyToEPs(t, comm, eps...)

	l := &stressLedger{outcomes: map[string]int{}}
	var seq atomic.Uint64
	stop := make(chan struct{})
	var callersWG, asyncWG sync.WaitGroup

	// call makes one random call and accounts for it.
	call := func(rng *rand.Rand) {
		n := seq.Add(1)
		limit := time.Duration(5+rng.IntN(150)) * time.Millisecond
		opts := []servantproxy.CallOption{servantproxy.WithTimeout(limit)}
		// The context: cancelled at a random moment (maybe before the deadline), or with a
		// deadline (maybe earlier than the timeout), or neither. release frees it once the call
		// has ended.
		ctx, cancel := context.WithCancel(context.Background())
		release := cancel
		switch r := rng.IntN(10); {
		case r < 3:
			tm := time.AfterFunc(time.Duration(rng.IntN(100))*time.Millisecond, cancel)
			release = func() { tm.Stop(); cancel() }
		case r < 4:
			d := time.Duration(5+rng.IntN(150)) * time.Millisecond
			var cancel2 context.CancelFunc
			ctx, cancel2 = context.WithTimeout(ctx, d)
			release = func() { cancel2(); cancel() }
			limit = min(limit, d)
		}
		afterClose := l.closeReturned.Load()
		kind := []callKind{syncCall, syncCall, asyncCall, asyncCall, onewayCall}[rng.IntN(5)]
		start := time.Now()
		switch kind {
		case syncCall, onewayCall:
			defer release()
			l.started.Add(1)
			var err error
			if kind == syncCall {
				_, err = sayHello(ctx, sp, "s", n, opts...)
			} else {
				err = onewayHello(ctx, sp, "o", n, opts...)
			}
			l.ended.Add(1)
			if took := time.Since(start); took > limit {
				l.late(took - limit)
			}
			l.record(kind, err)
			l.checkAfterClose(afterClose, kind, err)
		case asyncCall:
			rsp := new(hellopb.HelloReply)
			var runs atomic.Int32
			asyncWG.Add(1)
			err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "a", Seq: n}, rsp, func(err error) {
				if runs.Add(1) > 1 {
					l.duplicates.Add(1)
					return
				}
				defer asyncWG.Done()
				defer release()
				if l.closeReturned.Load() {
					l.afterClose.Add(1)
				}
				l.callbacks.Add(1)
				if took := time.Since(start); took > limit {
					l.late(took - limit)
				}
				if err == nil {
					_, err = checkReply(rsp, "a", n)
				}
				l.record(kind, err)
			}, opts...)
			if err != nil {
				asyncWG.Done()
				release()
				l.asyncRefused.Add(1)
				if !isOneOf(err, communicator.ErrQueueFull, communicator.ErrClosed, context.Canceled, context.DeadlineExceeded) {
					l.record("async-refused", err)
				}
				l.checkAfterClose(afterClose, kind, err)
				return
			}
			l.asyncAccepted.Add(1)
			l.checkAfterClose(afterClose, kind, errors.New("AsyncInvoke accepted the call"))
		}
	}

	for i := range callers {
		callersWG.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			for {
				select {
				case <-stop:
					return
				default:
				}
				call(rng)
			}
		})
	}

	// Chaos on the proxies.
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		rng := rand.New(rand.NewPCG(7, 7))
		tk := time.NewTicker(40 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			p := eps[rng.IntN(len(eps))].p
			switch rng.IntN(8) {
			case 0:
				p.Cut()
			case 1:
				p.BlackHole(faultproxy.Both)
			case 2:
				p.SetDelay(time.Duration(rng.IntN(60)) * time.Millisecond)
			case 3:
				garbage := make([]byte, 1+rng.IntN(40))
				for i := range garbage {
					garbage[i] = byte(rng.IntN(256))
				}
				p.CorruptNext(garbage, rng.IntN(2) == 0)
			case 4:
				_ = p.Refuse(faultproxy.Reset)
			case 5:
				_ = p.Refuse(faultproxy.Closed)
				p.Cut()
			default:
				if err := p.Pass(); err != nil {
					t.Errorf("proxy Pass: %v", err)
				}
			}
		}
	}()

	time.Sleep(runFor)
	// A busy machine makes fewer calls in runFor: run on (up to the liveness bound) until the
	// stress has made enough of both kinds for its checks to mean something.
	for more := time.Now().Add(live); time.Now().Before(more) && (l.started.Load() < stressMin || l.asyncAccepted.Load() < stressMin); {
		time.Sleep(50 * time.Millisecond)
	}
	closeStart := time.Now()
	if err := closeComm(t, comm); err != nil {
		t.Errorf("Close: %v", err)
	}
	l.closeReturned.Store(true)
	closeTook := time.Since(closeStart)
	time.Sleep(100 * time.Millisecond) // callers keep calling a closed Communicator
	close(stop)

	allDone := make(chan struct{})
	go func() {
		callersWG.Wait()
		asyncWG.Wait()
		<-chaosDone
		close(allDone)
	}()
	select {
	case <-allDone:
	case <-time.After(10 * time.Second):
		t.Fatalf("calls hang after Close: %d of %d sync/one-way calls ended, %d of %d callbacks ran",
			l.ended.Load(), l.started.Load(), l.callbacks.Load(), l.asyncAccepted.Load())
	}
	time.Sleep(50 * time.Millisecond) // a duplicate callback would have run by now

	l.mu.Lock()
	keys := make([]string, 0, len(l.outcomes))
	for k := range l.outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	summary := ""
	for _, k := range keys {
		summary += fmt.Sprintf(" [%s: %d]", k, l.outcomes[k])
	}
	l.mu.Unlock()
	t.Logf("outcomes:%s", summary)
	t.Logf("async accepted %d, refused %d; worst lateness %v; Close took %v", l.asyncAccepted.Load(), l.asyncRefused.Load(), time.Duration(l.maxLate.Load()), closeTook)

	if got, want := l.ended.Load(), l.started.Load(); got != want {
		t.Errorf("sync/one-way calls: %d ended, want %d (started)", got, want)
	}
	if got, want := l.callbacks.Load(), l.asyncAccepted.Load(); got != want {
		t.Errorf("async callbacks: %d ran, want %d (accepted calls)", got, want)
	}
	if got := l.duplicates.Load(); got != 0 {
		t.Errorf("%d callbacks ran a second time, want 0", got)
	}
	if got := l.afterClose.Load(); got != 0 {
		t.Errorf("%d callbacks ran after Close returned, want 0", got)
	}
	if got := l.notClosedAfter.Load(); got != 0 {
		t.Errorf("%d calls made after Close did not fail with ErrClosed", got)
	}
	// Every call ended (above); how late after its deadline, and how long Close took, are
	// figures. A call 5s past its deadline did not end by its deadline at all.
	late := time.Duration(l.maxLate.Load())
	if late > 5*time.Second {
		t.Errorf("a call ended %v after its deadline: it was not ended by its deadline", late)
	}
	timingFigure(t, late <= lateness, late > 3*lateness, "worst call ended %v after its deadline (target at most %v)", late, lateness)
	timingFigure(t, closeTook < 2*time.Second, closeTook > 6*time.Second, "Close under load took %v (target well under 2s)", closeTook)
	l.mu.Lock()
	for _, u := range l.unexpected {
		t.Errorf("unexpected error: %s", u)
	}
	l.mu.Unlock()
	if l.started.Load() < stressMin || l.asyncAccepted.Load() < stressMin {
		t.Errorf("only %d sync/one-way and %d async calls made: the stress did not stress", l.started.Load(), l.asyncAccepted.Load())
	}
}
