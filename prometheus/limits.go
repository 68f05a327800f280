package tarsprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tarscomm/tarscomm/server"
)

// LimitsCollector is a prometheus.Collector of what a server's limits refused and closed
// (server.LimitStats).
type LimitsCollector struct {
	src func() server.LimitStats

	refused, closed, grown, queueTimeouts, queueFull *prometheus.Desc
}

// NewLimitsCollector returns a LimitsCollector that reads src (Server.LimitStats) at each
// scrape. Its metrics are a server's, in subsystem "server" whatever Options.Side says;
// Namespace and ConstLabels apply as for NewCollector. Every series is sent at each scrape,
// zero or not.
func NewLimitsCollector(src func() server.LimitStats, o Options) *LimitsCollector {
	if o.Namespace == "" {
		o.Namespace = "tarscomm"
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(o.Namespace, "server", name), help, labels, o.ConstLabels)
	}
	return &LimitsCollector{
		src:     src,
		refused: d("connections_refused_total", "Connections accepted beyond WithMaxConns and closed at once."),
		closed: d("connections_closed_total", "Connections a limit closed, by reason: idle (WithIdleTimeout), "+
			"slow (WithBacklog's rule: a backlog the client did not read), backlog (over WithMaxBacklog's cap).", "reason"),
		grown: d("requests_grown_total", "Large requests received into a growing buffer because WithFrameBudget "+
			"had no room for their length."),
		queueTimeouts: d("queue_timeouts_total", "Requests not run because they waited for a worker too long "+
			"(WithQueueTimeout or the client's timeout); answered -6, or dropped if one-way."),
		queueFull: d("queue_full_total", "Requests refused because the worker queue was full "+
			"(WithQueueCap, WithQueueBytes); answered -9."),
	}
}

// Describe sends every metric's description.
func (c *LimitsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.refused, c.closed, c.grown, c.queueTimeouts, c.queueFull} {
		ch <- d
	}
}

// Collect reads the server's counts and sends them.
func (c *LimitsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		send(ch, d, prometheus.CounterValue, float64(v), labels)
	}
	counter(c.refused, s.Refused)
	counter(c.closed, s.Idle, "idle")
	counter(c.closed, s.Slow, "slow")
	counter(c.closed, s.Backlog, "backlog")
	counter(c.grown, s.Grown)
	counter(c.queueTimeouts, s.QueueTimeout)
	counter(c.queueFull, s.QueueFull)
}
