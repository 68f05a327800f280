package objectproxy

import (
	"time"

	"github.com/tarscomm/tarscomm/adapterproxy"
)

// Guard holds what the ObjectProxy applies to keep a servant's failing endpoints from failing
// its calls: its endpoints' circuit breaker and its retry budget.
type Guard struct {
	// Breaker is every endpoint's circuit breaker (adapterproxy.Breaker); zero: none.
	Breaker adapterproxy.Breaker
	// RetryRatio caps retries at this fraction of the calls routed (a token bucket: every call
	// adds RetryRatio tokens, every retry takes one); 0: retries are not budgeted.
	RetryRatio float64
	// RetryMin is the retries per second allowed on top of the ratio, so that a servant with
	// few calls can still retry. Both are per net thread.
	RetryMin float64
}

// newRetryBudget returns t's retry budget (off when t.RetryRatio is 0).
func newRetryBudget(t Guard) retryBudget {
	if t.RetryRatio <= 0 {
		return retryBudget{}
	}
	return retryBudget{
		on: true, ratio: t.RetryRatio, perSec: t.RetryMin,
		max:    max(t.RetryMin, 1) + 100*t.RetryRatio,
		tokens: t.RetryMin, // a second's worth: with no constant, the ratio alone earns retries
	}
}

// retryBudget is the token bucket that caps retries (Finagle's RetryBudget, as a bucket): every
// routed call deposits ratio tokens, the clock perSec tokens a second, up to max; a retry takes
// one token, and a retry that finds less than one is refused: the call fails with its error, as
// with retries = 0. The bucket starts with a second's worth of the constant (none when it is 0). A failing cluster then sees at most ratio more calls than its callers make,
// plus the constant, instead of retries times as many. Owned by the loop goroutine.
type retryBudget struct {
	on     bool
	ratio  float64
	perSec float64
	max    float64
	tokens float64
	last   int64 // when the clock's tokens were last added

	retries, denied uint64
}

// deposit records a routed call.
func (b *retryBudget) deposit() {
	if b.on {
		b.tokens = min(b.tokens+b.ratio, b.max)
	}
}

// withdraw reports whether a retry may go now, and takes its token.
func (b *retryBudget) withdraw(now int64) bool {
	if !b.on {
		return true
	}
	if b.last != 0 && now > b.last {
		b.tokens = min(b.tokens+b.perSec*float64(now-b.last)/float64(time.Second), b.max)
	}
	b.last = now
	if b.tokens < 1 {
		b.denied++
		return false
	}
	b.tokens--
	b.retries++
	return true
}

// RetryStats returns the retries the budget let through and those it refused, since the
// ObjectProxy was built (both 0 without a budget). Must be called on the loop goroutine.
func (o *ObjectProxy) RetryStats() (retries, denied uint64) {
	return o.budget.retries, o.budget.denied
}
