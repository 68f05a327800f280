package communicator_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// Issue 9 item 7: recovery after a fault is fast, and a bad endpoint is left at once. Every test
// runs 16 callers of 128 B sync calls with a 300ms timeout under the default health rules, and
// judges by counts of calls in time windows.
const (
	recCallers = 16
	recTimeout = 300 * time.Millisecond
	recWindow  = 100 * time.Millisecond // the window rates are counted in
	// recSlack is the scheduling slack on the 200ms recovery target: smaller than the suite's
	// slack, which would hide the reconnect backoff this test is about.
	recSlack = 100 * time.Millisecond
)

// record is one call of a recorder: when it started and ended (since the recorder's start), the
// endpoint that answered, and its outcome (classify's classes).
type record struct {
	start, end time.Duration
	from       string
	class      string
}

// recorder runs sync calls from many goroutines and records every one.
type recorder struct {
	t0   time.Time
	mu   sync.Mutex
	recs []record
	stop chan struct{}
	wg   sync.WaitGroup
}

func startRecorder(t *testing.T, sp *servantproxy.ServantProxy) *recorder {
	t.Helper()
	r := &recorder{t0: time.Now(), stop: make(chan struct{})}
	ctx := testCtx(t)
	name := strings.Repeat("r", 128)
	for w := range recCallers {
		r.wg.Go(func() {
			for seq := uint64(w) << 32; ; seq++ {
				select {
				case <-r.stop:
					return
				default:
				}
				start := r.now()
				from, err := sayHello(ctx, sp, name, seq, servantproxy.WithTimeout(recTimeout))
				rec := record{start: start, end: r.now(), from: from, class: classify(err)}
				if rec.class == "" {
					rec.class = err.Error()
				}
				r.mu.Lock()
				r.recs = append(r.recs, rec)
				r.mu.Unlock()
				if err != nil {
					time.Sleep(time.Millisecond) // a failing endpoint must not turn callers into spinners
				}
			}
		})
	}
	return r
}

func (r *recorder) now() time.Duration { return time.Since(r.t0) }

// snapshot returns the records so far.
func (r *recorder) snapshot() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.recs...)
}

// finish stops the callers and returns the records.
func (r *recorder) finish() []record {
	close(r.stop)
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recs
}

// countEnded counts the records that ended in [from, to) and satisfy keep.
func countEnded(recs []record, from, to time.Duration, keep func(record) bool) int {
	n := 0
	for _, r := range recs {
		if r.end >= from && r.end < to && keep(r) {
			n++
		}
	}
	return n
}

func isOK(r record) bool { return r.class == "ok" }

// backAt returns the first time t >= after (in 10ms steps, before until) at which the window
// [t, t+recWindow) holds at least want records satisfying keep, or -1.
func backAt(recs []record, after, until time.Duration, want int, keep func(record) bool) time.Duration {
	for t := after; t+recWindow <= until; t += 10 * time.Millisecond {
		if countEnded(recs, t, t+recWindow, keep) >= want {
			return t
		}
	}
	return -1
}

// garbage is what the server seems to send during a garbage fault: a length prefix far over
// max-packet-size.
var garbage = bytes.Repeat([]byte{0xff}, 16)

// recoveryFault is one fault of the recovery tests: start applies it, end undoes it.
type recoveryFault struct {
	name  string
	hold  time.Duration
	start func(t *testing.T, p *faultproxy.Proxy) (end func())
}

var recoveryFaults = []recoveryFault{
	{name: "refuse 2s", hold: 2 * time.Second, start: func(t *testing.T, p *faultproxy.Proxy) func() {
		if err := p.Refuse(faultproxy.Closed); err != nil {
			t.Fatal(err)
		}
		p.Cut()
		return func() {}
	}},
	{name: "garbage 1s", hold: time.Second, start: func(t *testing.T, p *faultproxy.Proxy) func() {
		// Every reply chunk is replaced with garbage while the fault lasts.
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				p.CorruptNext(garbage, false)
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		return func() { close(stop); <-done }
	}},
	{name: "reset 1s", hold: time.Second, start: func(t *testing.T, p *faultproxy.Proxy) func() {
		if err := p.Refuse(faultproxy.Reset); err != nil {
			t.Fatal(err)
		}
		p.Cut()
		return func() {}
	}},
}

// TestRecoveryOneEndpoint runs calls to one endpoint through a fault (refused for 2s, garbage
// replies for 1s, connections reset for 1s): once the proxy passes traffic again, calls succeed
// again, and (a timing target, checked by make test-timing) within 200ms (plus 100ms of
// scheduling slack) at half their old rate or better.
func TestRecoveryOneEndpoint(t *testing.T) {
	const within = 200 * time.Millisecond
	for _, f := range recoveryFaults {
		t.Run(f.name, func(t *testing.T) {
			ep := startFaultEP(t, "a")
			comm := newComm(t, faultConf(nil))
			sp := proxyToEPs(t, comm, ep)
			if _, err := sayHello(testCtx(t), sp, "warm", 0); err != nil {
				t.Fatal(err)
			}
			r := startRecorder(t, sp)
			time.Sleep(600 * time.Millisecond)
			faultAt := r.now()
			end := f.start(t, ep.p)
			time.Sleep(f.hold)
			end()
			if err := ep.p.Pass(); err != nil {
				t.Fatal(err)
			}
			passAt := r.now()
			time.Sleep(1500 * time.Millisecond)
			recs := r.finish()
			until := r.now()

			before := countEnded(recs, 100*time.Millisecond, faultAt, isOK) * int(recWindow) / int(faultAt-100*time.Millisecond)
			if countEnded(recs, 0, faultAt, isOK) == 0 {
				t.Fatalf("no call succeeded before the fault")
			}
			// The outcome: calls succeed again after the fault (the recorder ran 1.5s after it;
			// on a busy machine give it up to live).
			first := backAt(recs, passAt, until, 1, isOK)
			if first < 0 {
				r2 := startRecorder(t, sp)
				waitFor(t, "a call succeeds after the fault", func() bool {
					return countEnded(r2.snapshot(), 0, time.Hour, isOK) > 0
				})
				r2.finish()
				// Calls do succeed again (the outcome make test asserts); how soon is a figure for
				// make test-timing, which fails on it.
				timingFigure(t, false, true, "no call succeeded in the %v after the fault ended, but one did later: recovery is slow", until-passAt)
				return
			}
			back := backAt(recs, passAt, until, max(before/2, 1), isOK)
			t.Logf("%d ok calls per %v before; after the fault the first success %v and half the old rate %v after the proxy passed again", before, recWindow, first-passAt, back-passAt)
			took := back - passAt
			if back < 0 {
				took = until - passAt // not within the whole span
			}
			if timingRun && before < 10 {
				t.Fatalf("only %d calls per %v before the fault: the load is too light to judge (make test-timing needs an idle machine)", before, recWindow)
			}
			timingFigure(t, back >= 0 && took <= within+recSlack, back < 0 || took > 3*within+recSlack,
				"calls came back to half their old rate (%d per %v) %v after the endpoint was healthy again (target within %v + %v slack)", max(before/2, 1), recWindow, took, within, recSlack)
		})
	}
}

// TestRecoveryStalledEndpointLeft stalls one of two endpoints for 2s: it is left (far fewer calls
// time out than succeed during the stall, where staying in rotation would time out about as many
// as succeed), and (timing targets, checked by make test-timing) within two call timeouts it gets
// no new calls save rare probes, and the calls keep succeeding at 80% or more of the rate they had
// before the stall.
func TestRecoveryStalledEndpointLeft(t *testing.T) {
	const stallFor = 2 * time.Second
	a, b := startFaultEP(t, "a"), startFaultEP(t, "b")
	comm := newComm(t, faultConf(nil))
	sp := proxyToEPs(t, comm, a, b)
	for i := range 4 {
		if _, err := sayHello(testCtx(t), sp, "warm", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	r := startRecorder(t, sp)
	time.Sleep(1100 * time.Millisecond)
	stallAt := r.now()
	a.p.Stall(faultproxy.Both)
	time.Sleep(stallFor)
	endAt := r.now()
	recs := r.finish()
	_ = a.p.Pass()

	okBefore := countEnded(recs, 100*time.Millisecond, stallAt, isOK)
	perSecBefore := float64(okBefore) / (stallAt - 100*time.Millisecond).Seconds()
	okDuring := countEnded(recs, stallAt, endAt, isOK)
	perSecDuring := float64(okDuring) / (endAt - stallAt).Seconds()
	out := stallAt + 2*recTimeout
	lateTimeouts := 0
	for _, rec := range recs {
		if rec.start >= out && rec.class == "timeout" {
			lateTimeouts++
		}
	}
	t.Logf("ok calls/s: %.0f before the stall, %.0f during it; %d calls started later than two timeouts into the stall timed out", perSecBefore, perSecDuring, lateTimeouts)
	// The outcome, by counts: calls went on succeeding, on b, and the stalled endpoint was left.
	timeoutsDuring := countEnded(recs, stallAt, endAt, func(r record) bool { return r.class == "timeout" })
	okFromB := countEnded(recs, stallAt, endAt, func(r record) bool { return r.class == "ok" && r.from == "b" })
	// A call started before the stall may still be answered by a: its reply was already past
	// the proxy when Stall took effect (seen: 7 of 14,329). Only calls started after it must be.
	okFromAAfter := countEnded(recs, stallAt, endAt, func(r record) bool {
		return r.class == "ok" && r.from != "b" && r.start > stallAt
	})
	if okDuring == 0 || okFromAAfter != 0 {
		t.Errorf("during the stall of a, %d calls succeeded, %d of them on b: want many, all on b", okDuring, okFromB)
	}
	if timeoutsDuring*5 > okDuring {
		t.Errorf("during the stall %d calls timed out against %d successes: the stalled endpoint was not left (in rotation about as many time out as succeed)", timeoutsDuring, okDuring)
	}
	const keep = 0.8
	timingFigure(t, perSecDuring >= keep*perSecBefore, perSecDuring < keep*perSecBefore/2,
		"during the stall of one of two endpoints %.0f calls/s succeeded, against %.0f before (target at least %.0f%%)", perSecDuring, perSecBefore, 100*keep)
	timingFigure(t, lateTimeouts <= 3, lateTimeouts > 20,
		"%d calls started more than %v into the stall went to the stalled endpoint and timed out (target at most 3 probes)", lateTimeouts, 2*recTimeout)
}

// TestRecoveryBackToShare faults one of two endpoints (refused, garbage, reset), then heals it:
// it answers its share of the calls again (at least a third of them in a window), and (a timing
// target, checked by make test-timing) within 1s of being healthy, without waiting for a try
// interval.
func TestRecoveryBackToShare(t *testing.T) {
	const within = time.Second
	for _, f := range recoveryFaults {
		t.Run(f.name, func(t *testing.T) {
			a, b := startFaultEP(t, "a"), startFaultEP(t, "b")
			comm := newComm(t, faultConf(nil))
			sp := proxyToEPs(t, comm, a, b)
			for i := range 4 {
				if _, err := sayHello(testCtx(t), sp, "warm", uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			r := startRecorder(t, sp)
			time.Sleep(300 * time.Millisecond)
			end := f.start(t, a.p)
			time.Sleep(f.hold)
			end()
			if err := a.p.Pass(); err != nil {
				t.Fatal(err)
			}
			passAt := r.now()
			fromA := func(rec record) bool { return rec.class == "ok" && rec.from == "a" }
			// a's share: in a window after passAt, a answered at least a third of all answers.
			backAfter := func(recs []record, until time.Duration) time.Duration {
				for t0 := passAt; t0+recWindow <= until; t0 += 10 * time.Millisecond {
					all := countEnded(recs, t0, t0+2*recWindow, isOK)
					if all >= 10 && 3*countEnded(recs, t0, t0+2*recWindow, fromA) >= all {
						return t0
					}
				}
				return -1
			}
			time.Sleep(within + 1500*time.Millisecond)
			// The outcome: a is back to its share (on a busy machine, wait up to live for it).
			back := time.Duration(-1)
			waitFor(t, "endpoint a back to a third of the calls", func() bool {
				back = backAfter(r.snapshot(), r.now())
				if back < 0 {
					time.Sleep(100 * time.Millisecond)
				}
				return back >= 0
			})
			r.finish()
			t.Logf("endpoint a back to its share %v after it was healthy again", back-passAt)
			timingFigure(t, back-passAt <= within+slack, back-passAt > 3*within,
				"endpoint a back to a third of the calls %v after being healthy again (target within %v + %v slack)", back-passAt, within, slack)
		})
	}
}
