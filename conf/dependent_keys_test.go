package conf

import (
	"strings"
	"testing"
)

// TestRetryBudgetKeysThatDoNothingRefused (accepted in silence before): a servant's retry-budget keys do nothing without
// the key they depend on, and Parse accepts them silently, although every accepted key must do
// what it says:
//   - retry-budget caps retries; with retries = 0 (the default) there are none to cap (a move to
//     another connection is "not a retry, and takes neither ... nor a token of the retry
//     budget");
//   - retry-budget-min is the bucket's refill besides retry-budget's fraction; with
//     retry-budget = 0 retries are "not budgeted" (newRetryBudget returns an empty budget) and
//     the minimum is never read.
//
// Each must be refused with an error naming the key and the key it needs. (testdata/full.toml
// sets both with retries = 1, which stays accepted.)
func TestRetryBudgetKeysThatDoNothingRefused(t *testing.T) {
	for _, tc := range []struct{ body, key, needs string }{
		{"retry-budget = 0.2", "retry-budget", "retries"},
		{"retries = 2\nretry-budget-min = 5", "retry-budget-min", "retry-budget"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			_, err := Parse([]byte("[servant.\"App.S.Obj\"]\n" + tc.body + "\n"))
			key := `servant."App.S.Obj".` + tc.key
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), tc.needs) {
				t.Fatalf("%q: Parse error %v; want a refusal naming %s and %s (without %s the key does nothing)",
					tc.body, err, key, tc.needs, tc.needs)
			}
		})
	}
}
