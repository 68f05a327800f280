package objectproxy

import "github.com/tarscomm/tarscomm/internal/call"

// Pick exposes pick to the benchmarks of objectproxy_test.
func (o *ObjectProxy) Pick(c *call.Call) int { return o.pick(c) }
