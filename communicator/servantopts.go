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

// guardOf is the ObjectProxies' guard against a servant's failing endpoints: the circuit breaker (circuit-breaker) and the retry budget (retry-budget,
// retry-budget-min).
func guardOf(s conf.Servant) objectproxy.Guard {
	var t objectproxy.Guard
	if s.CircuitBreaker {
		t.Breaker = adapterproxy.DefaultBreaker()
	}
	t.RetryRatio, t.RetryMin = s.RetryBudget, float64(s.RetryBudgetMin)
	return t
}
