package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// The tail scenarios of issue 11: 64 callers calling back to back, over fault proxies in front
// of the project's server. Each logs its numbers (go test -v -run Tail). Under make test they
// assert outcomes (calls succeed, by counts where each endpoint's calls went, compared with a
// control run in the same test); latency quantiles and small shares are figures, checked by make
// test-timing (300ms call timeouts, 2s spans, no -race, idle machine).
const (
	tailCallers = 64
	tailWarm    = 300 * time.Millisecond
	slowDelay   = 50 * time.Millisecond // per chunk, each way
)

var (
	// tailTimeout is the calls' timeout: the scenario's 300ms in a timing run; a liveness bound
	// under make test, where a busy machine makes a loopback call late, not failed.
	tailTimeout = timingOr(300*time.Millisecond, 3*time.Second)
	// tailSpan is how long each load runs: counts of 1s of 64 callers are thousands of calls.
	tailSpan = timingOr(2*time.Second, time.Second)
)

// timingOr returns timing in a timing run (see timingRun), otherwise def.
func timingOr(timing, def time.Duration) time.Duration {
	if timingRun {
		return timing
	}
	return def
}

// raceSlack widens a latency bound under the race detector only.
func raceSlack(strict, race time.Duration) time.Duration {
	if raceEnabled {
		return race
	}
	return strict
}

// TestTailSlowEndpointP2C: three endpoints, one slowed by 50ms: round robin hands a third of the
// calls its latency; p2c keeps the p99 within 1.5x the fast endpoints' own p99.
func TestTailSlowEndpointP2C(t *testing.T) {
	a, b, c := startTGreeter(t, "a"), startTGreeter(t, "b"), startTGreeter(t, "c")
	_, fastSP := tailProxy(t, conf.Servant{LoadBalance: "p2c"}, a, b)
	fast := runTail(t, fastSP, tailCallers, tailWarm, tailSpan, tailTimeout)
	t.Logf("two fast endpoints, p2c:         %v", fast)

	c.p.SetDelay(slowDelay)
	_, rrSP := tailProxy(t, conf.Servant{LoadBalance: "roundrobin"}, a, b, c)
	rr := runTail(t, rrSP, tailCallers, tailWarm, tailSpan, tailTimeout)
	t.Logf("one of three slowed, roundrobin: %v slow share=%.1f%%", rr, 100*rr.share("c"))

	_, p2cSP := tailProxy(t, conf.Servant{LoadBalance: "p2c"}, a, b, c)
	p2c := runTail(t, p2cSP, tailCallers, tailWarm, tailSpan, tailTimeout)
	t.Logf("one of three slowed, p2c:        %v slow share=%.1f%%", p2c, 100*p2c.share("c"))

	_, liSP := tailProxy(t, conf.Servant{LoadBalance: "least-inflight"}, a, b, c)
	li := runTail(t, liSP, tailCallers, tailWarm, tailSpan, tailTimeout)
	t.Logf("one of three slowed, least-inflight: %v slow share=%.1f%%", li, 100*li.share("c"))

	if err := p2c.firstErr(); err != nil {
		t.Fatalf("p2c: a call failed: %v", err)
	}
	if rr.share("c") < 0.1 {
		t.Errorf("round robin sent only %.1f%% of the calls to the slow endpoint: the scenario does not slow it", 100*rr.share("c"))
	}
	// The outcome, against the round-robin control of the same run (thousands of calls each):
	// p2c steers clear of the slow endpoint. The 1% target is a figure (CI saw 1.1% at load 6-18).
	if s, ctl := p2c.share("c"), rr.share("c"); s > ctl/3 {
		t.Errorf("p2c sent %.1f%% of the calls to the slow endpoint, round robin %.1f%%: want at most a third of round robin's", 100*s, 100*ctl)
	}
	bound := time.Duration(1.5*float64(fast.quantile(0.99))) + 2*time.Millisecond
	got := p2c.quantile(0.99)
	timingFigure(t, got <= bound, got > 3*bound, "p2c p99 = %v with one slow endpoint (target at most %v: 1.5x the fast endpoints' p99 %v, plus 2ms)", got, bound, fast.quantile(0.99))
	s := p2c.share("c")
	timingFigure(t, s <= 0.01, s > 0.05, "p2c sent %.2f%% of %d calls to the slow endpoint (target at most 1%%)", 100*s, p2c.ok())
}

// TestTailSlowEndpointThroughput: two endpoints, one slowed by 50ms: p2c keeps at least 80% of
// the healthy pair's throughput.
func TestTailSlowEndpointThroughput(t *testing.T) {
	a, b := startTGreeter(t, "a"), startTGreeter(t, "b")
	_, healthySP := tailProxy(t, conf.Servant{LoadBalance: "p2c"}, a, b)
	healthy := runTail(t, healthySP, tailCallers, tailWarm, tailSpan, tailTimeout)
	t.Logf("two healthy endpoints, p2c:   %v", healthy)

	b.p.SetDelay(slowDelay)
	_, rrSP := tailProxy(t, conf.Servant{LoadBalance: "roundrobin"}, a, b)
	rr := runTail(t, rrSP, tailCallers, tailWarm, tailSpan, tailTimeout)
	t.Logf("one of two slowed, roundrobin: %v kept=%.0f%%", rr, 100*rr.rate()/healthy.rate())

	_, p2cSP := tailProxy(t, conf.Servant{LoadBalance: "p2c"}, a, b)
	p2c := runTail(t, p2cSP, tailCallers, tailWarm, tailSpan, tailTimeout)
	kept := p2c.rate() / healthy.rate()
	t.Logf("one of two slowed, p2c:        %v kept=%.0f%%", p2c, 100*kept)

	// The outcome: every call succeeded, and p2c sent most calls to the fast endpoint. The
	// throughput kept is a figure (the race detector's cost varies with the mix of work).
	if err := p2c.firstErr(); err != nil {
		t.Fatalf("p2c: a call failed: %v", err)
	}
	if s, ctl := p2c.share("b"), rr.share("b"); s > ctl/2 {
		t.Errorf("p2c sent %.1f%% of the calls to the slow endpoint, round robin %.1f%%: want at most half of round robin's", 100*s, 100*ctl)
	}
	const want = 0.8
	timingFigure(t, kept >= want, kept < want/2, "p2c kept %.0f%% of the throughput with one of two endpoints slowed (target at least %.0f%%)", 100*kept, 100*want)
}

// TestTailBackupRequest: three endpoints, one slowed by 50ms, round robin: with
// backup-request = "10ms" the p99 is at most 20ms, each caller gets its own reply once, and the
// budget holds backups to its fraction.
func TestTailBackupRequest(t *testing.T) {
	// Under the race detector the fast endpoints' own p50 nears 10ms on a busy 2-core machine,
	// and a backup delay below the median only spends the budget: there the delay is 30ms. The
	// latency bound is a figure (CI saw p95 = 121ms against 80ms at load 6-18).
	delay := raceSlack(10*time.Millisecond, 30*time.Millisecond)
	const bound = 20 * time.Millisecond
	a, b, c := startTGreeter(t, "a"), startTGreeter(t, "b"), startTGreeter(t, "c")
	c.p.SetDelay(slowDelay)
	sv := conf.Servant{BackupRequest: delay, BackupBudget: 0.5, Idempotent: []string{"SayHello"}}
	_, sp := tailProxy(t, sv, a, b, c)
	l := runTail(t, sp, tailCallers, tailWarm, tailSpan, tailTimeout)
	st := sp.BackupStats()
	t.Logf("one of three slowed, roundrobin, backup-request %v, budget 50%%: %v backups=%d (%.1f%% of %d calls) won=%d dropped=%d denied=%d",
		delay, l, st.Sent, 100*float64(st.Sent)/float64(l.total), l.total, st.Won, st.Dropped, st.Denied)
	if err := l.firstErr(); err != nil {
		t.Fatalf("a call failed: %v", err) // sayHello checks each reply is the caller's own
	}
	const q = 0.99
	got := l.quantile(q)
	timingFigure(t, got <= bound, got > 4*bound, "p%.0f = %v with backup requests (target at most %v; without them over 100ms)", 100*q, got, bound)
	if st.Sent == 0 || st.Won == 0 {
		t.Errorf("backups sent %d, won %d: want both > 0", st.Sent, st.Won)
	}
	// Each pair whose backup was sent drops one outcome; an unsent backup drops none.
	if st.Dropped > st.Sent {
		t.Errorf("dropped %d outcomes for %d backups", st.Dropped, st.Sent)
	}

	// The default budget, 10%: round robin would want a backup for a third of the calls.
	_, sp10 := tailProxy(t, conf.Servant{BackupRequest: delay, Idempotent: []string{"SayHello"}}, a, b, c)
	l10 := runTail(t, sp10, tailCallers, tailWarm, tailSpan, tailTimeout)
	st10 := sp10.BackupStats()
	frac := float64(st10.Sent) / float64(l10.total)
	t.Logf("same, default budget 10%%: %v backups=%d (%.1f%% of %d calls) denied=%d", l10, st10.Sent, 100*frac, l10.total, st10.Denied)
	if limit := 0.1*float64(l10.total) + 20; float64(st10.Sent) > limit {
		t.Errorf("backups = %d for %d calls, want at most 10%% + 20 = %.0f", st10.Sent, l10.total, limit)
	}
	if st10.Denied == 0 {
		t.Errorf("the budget denied no backup: the scenario does not need more than 10%%")
	}
	// With p2c the slow endpoint gets few calls, and the default budget covers them.
	_, spP2C := tailProxy(t, conf.Servant{LoadBalance: "p2c", BackupRequest: delay, Idempotent: []string{"SayHello"}}, a, b, c)
	lp := runTail(t, spP2C, tailCallers, tailWarm, tailSpan, tailTimeout)
	stp := spP2C.BackupStats()
	t.Logf("same, p2c, default budget 10%%: %v backups=%d (%.1f%% of %d calls) won=%d denied=%d", lp, stp.Sent, 100*float64(stp.Sent)/float64(lp.total), lp.total, stp.Won, stp.Denied)
	if err := lp.firstErr(); err != nil {
		t.Fatalf("p2c with backup requests: a call failed: %v", err)
	}
	gotP2C := lp.quantile(q)
	timingFigure(t, gotP2C <= bound, gotP2C > 4*bound, "p2c with backup requests: p%.0f = %v (target at most %v)", 100*q, gotP2C, bound)

	// A function not listed as idempotent is never sent twice.
	before := sp10.BackupStats().Sent
	if err := sp10.Invoke(testCtx(t), "SayHelloAgain", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply)); err == nil {
		t.Fatal("SayHelloAgain does not exist on the server, want an error")
	}
	if got := sp10.BackupStats().Sent; got != before {
		t.Errorf("a call of a function not listed idempotent had a backup")
	}
}

// TestTailBreakerFailingEndpoint: three endpoints, one failing every other call: the TARS health
// rules do not take it out (its errors are replies); the circuit breaker does within a second,
// and the error rate callers see after that second is below 1%.
func TestTailBreakerFailingEndpoint(t *testing.T) {
	const breakerSpan = 2 * time.Second // the first second is the breaker's to learn
	a, b, c := startTGreeter(t, "a"), startTGreeter(t, "b"), startTGreeter(t, "c")
	c.failHalf.Store(true)
	_, offSP := tailProxy(t, conf.Servant{}, a, b, c)
	off := runTail(t, offSP, tailCallers, 0, breakerSpan, tailTimeout)
	offLate, _ := off.errRate(time.Second, breakerSpan)
	t.Logf("one of three failing half, no breaker: %v errors after 1s=%.2f%%", off, 100*offLate)

	_, onSP := tailProxy(t, conf.Servant{CircuitBreaker: true}, a, b, c)
	on := runTail(t, onSP, tailCallers, 0, breakerSpan, tailTimeout)
	onFirst, _ := on.errRate(0, time.Second)
	onLate, n := on.errRate(time.Second, breakerSpan)
	t.Logf("one of three failing half, breaker:    %v errors in the first second=%.2f%%, after it=%.2f%% of %d", on, 100*onFirst, 100*onLate, n)

	if offLate < 0.05 {
		t.Errorf("without a breaker callers saw %.2f%% errors: the scenario does not fail", 100*offLate)
	}
	// The outcome, against the control without a breaker in the same run: the breaker cut the
	// errors. Below 1% after the first second is a figure.
	if n == 0 || onLate > offLate/2 {
		t.Errorf("with the breaker callers saw %.2f%% errors after the first second (%d calls), without it %.2f%%: want the breaker to cut them by half at least", 100*onLate, n, 100*offLate)
	}
	timingFigure(t, onLate < 0.01, onLate >= 0.05, "with the breaker callers saw %.2f%% errors after the first second (target below 1%%)", 100*onLate)
}

// TestTailMaxInflight: beyond max-inflight calls fail at once with ErrOverload, sync and async;
// the slots come back when the calls end.
func TestTailMaxInflight(t *testing.T) {
	g := startTGreeter(t, "a")
	g.hold.Store(int64(300 * time.Millisecond))
	_, sp := tailProxy(t, conf.Servant{MaxInflight: 4}, g)
	ctx := testCtx(t)
	done := make(chan error, 4)
	for i := range 2 {
		go func() {
			_, err := sayHello(ctx, sp, "held", uint64(i))
			done <- err
		}()
		errc, err := asyncHello(t, ctx, sp, "held", uint64(10+i))
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- <-errc }()
	}
	eventually(t, 5*time.Second, "4 calls in flight", func() bool { return g.calls.Load() == 4 })
	start := time.Now()
	_, err := sayHello(ctx, sp, "over", 99)
	if !errors.Is(err, communicator.ErrOverload) {
		t.Fatalf("5th sync call: %v, want ErrOverload", err)
	}
	if _, err := asyncHello(t, ctx, sp, "over", 100); !errors.Is(err, servantproxy.ErrOverload) {
		t.Fatalf("5th async call: %v, want ErrOverload", err)
	}
	// ErrOverload itself says they were refused, not queued; how soon is a figure.
	within(t, "refusing the calls over max-inflight", time.Since(start), 20*time.Millisecond)
	for range 4 {
		if err := <-done; err != nil {
			t.Fatalf("held call: %v", err)
		}
	}
	eventually(t, time.Second, "slots released", func() bool { return sp.Inflight() == 0 })
	g.hold.Store(0)
	if _, err := sayHello(ctx, sp, "after", 1); err != nil {
		t.Fatalf("call after the held ones ended: %v", err)
	}
	// A cancelled async call gives its slot back too.
	g.hold.Store(int64(300 * time.Millisecond))
	cctx, cancel := context.WithCancel(ctx)
	errc, err := asyncHello(t, cctx, sp, "cancelled", 2)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled async call: %v", err)
	}
	eventually(t, time.Second, "slot of the cancelled call released", func() bool { return sp.Inflight() == 0 })
}

// TestTailOverloadBackoff: an endpoint answering -9 is backed off: it gets a small share of the
// calls while it keeps answering -9, and its answers match ErrOverload.
func TestTailOverloadBackoff(t *testing.T) {
	a, b := startTGreeter(t, "a"), startTGreeter(t, "b")
	a.overload.Store(true)
	_, sp := tailProxy(t, conf.Servant{}, a, b)
	l := runTail(t, sp, 16, 0, time.Second, tailTimeout)
	atA, atB := a.calls.Load(), b.calls.Load()
	r, _ := l.errRate(0, time.Hour)
	t.Logf("one of two answering -9, roundrobin: %v calls at the overloaded endpoint=%d, at the other=%d", l, atA, atB)
	if err := l.firstErr(); err == nil || !errors.Is(err, communicator.ErrOverload) {
		t.Fatalf("first error = %v, want one matching ErrOverload", err)
	}
	// The outcome: it was backed off (round robin without back-off gives it as many calls as the
	// other). At most 2% is a figure.
	if atA*5 > atB {
		t.Errorf("the overloaded endpoint got %d calls against %d: not backed off", atA, atB)
	}
	timingFigure(t, float64(atA) <= 0.02*float64(atB) && r <= 0.02, float64(atA) > 0.1*float64(atB),
		"the overloaded endpoint got %d calls against %d (errors %.2f%%) (target at most 2%%)", atA, atB, 100*r)
}

// TestTailBackupMarked: with backup-request set and no idempotent list, a function gets backups
// once the proxy marks it idempotent (as stubs generated from a .proto saying so do).
func TestTailBackupMarked(t *testing.T) {
	a, b := startTGreeter(t, "a"), startTGreeter(t, "b")
	b.p.SetDelay(slowDelay)
	_, sp := tailProxy(t, conf.Servant{BackupRequest: raceSlack(10*time.Millisecond, 30*time.Millisecond)}, a, b)
	ctx := testCtx(t)
	for i := range 4 {
		if _, err := sayHello(ctx, sp, "unmarked", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := sp.BackupStats().Sent; got != 0 {
		t.Fatalf("%d backups for a function not marked idempotent", got)
	}
	sp.MarkIdempotent("SayHello")
	for i := range 4 {
		start := time.Now()
		if _, err := sayHello(ctx, sp, "marked", uint64(i)); err != nil {
			t.Fatal(err)
		}
		within(t, fmt.Sprintf("marked call %d (its backup answering first)", i), time.Since(start), 40*time.Millisecond)
	}
	if st := sp.BackupStats(); st.Sent == 0 || st.Won == 0 {
		t.Fatalf("backups after marking: %+v, want some sent and won", st)
	}
}
