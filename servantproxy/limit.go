package servantproxy

import (
	"fmt"
	"sync/atomic"

	"github.com/tarscomm/tarscomm/internal/call"
)

// Limit is a servant's max-inflight: at most max calls (sync, async and one-way, counted from
// the caller's side: a call is in flight from when it is prepared until its caller has its
// outcome) at a time; beyond it a call fails at once with ErrOverload, without being sent. A
// max of 0 means no limit, at the cost of one branch. The proxies of one servant share one
// (Options.Limit): a Communicator gives a servant's proxies, whatever their proxy strings, the
// same.
type Limit struct {
	max int64
	n   atomic.Int64
	err error // what a refused call fails with: ErrOverload, naming the limit
}

// NewLimit returns a Limit of max calls in flight (0 or less: none).
func NewLimit(max int) *Limit {
	return &Limit{max: int64(max), err: fmt.Errorf("%w: the servant's max-inflight (%d) calls are in flight", call.ErrOverload, max)}
}

// acquire takes a slot, reporting false (and taking none) when all are in use.
func (l *Limit) acquire() bool {
	if l.max <= 0 {
		return true
	}
	if l.n.Add(1) > l.max {
		l.n.Add(-1)
		return false
	}
	return true
}

// release gives back the slot of a call whose caller has its outcome.
func (l *Limit) release() {
	if l.max > 0 {
		l.n.Add(-1)
	}
}

// finisher returns the Finish of the proxy's async calls: finishAsync, releasing the call's
// slot first when the servant has a limit. Bound once per proxy, so that a call allocates
// nothing for it.
func (p *proxy) finisher() func(*call.Call) {
	if p.limit.max <= 0 {
		return finishAsync
	}
	return func(c *call.Call) {
		p.limit.release()
		finishAsync(c)
	}
}

// Inflight returns the calls in flight as max-inflight counts them (0 without a limit).
func (s *ServantProxy) Inflight() int {
	if s == nil || s.p == nil {
		return 0
	}
	return int(s.p.limit.n.Load())
}
