package communicator

import (
	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/debugpage"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// balancerSettings are the registered balancers as the debug page lists them.
func balancerSettings() []debugpage.Setting {
	names, docs := objectproxy.Balancers()
	out := make([]debugpage.Setting, len(names))
	for i, n := range names {
		out[i] = debugpage.Setting{Key: n, Value: docs[i]}
	}
	return out
}

// tailOf is the ObjectProxies' part of a servant's settings against tail latency and failing
// endpoints: the circuit breaker (circuit-breaker) and the retry budget (retry-budget,
// retry-budget-min).
func tailOf(s conf.Servant) objectproxy.Tail {
	var t objectproxy.Tail
	if s.CircuitBreaker {
		t.Breaker = adapterproxy.DefaultBreaker()
	}
	t.RetryRatio, t.RetryMin = s.RetryBudget, float64(s.RetryBudgetMin)
	return t
}
