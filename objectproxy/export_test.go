package objectproxy

import "github.com/tarscomm/tarscomm/internal/call"

// Pick exposes pick to the benchmarks of objectproxy_test.
func (o *ObjectProxy) Pick(c *call.Call) int { return o.pick(c) }

// EndpointLoad exposes View.Load of endpoint i at now (0: each connection's last value,
// undecayed). Run it on the loop.
func (o *ObjectProxy) EndpointLoad(i int32, now int64) (latency float64, inflight int) {
	o.view.now = now
	return o.view.Load(i)
}
