package tarsprom

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tarscomm/tarscomm/stats"
)

// Options configure a Collector or a LimitsCollector.
type Options struct {
	// Namespace prefixes every metric. Default "tarscomm".
	Namespace string
	// Side is the subsystem of the call metrics: "client" (default) or "server". The net thread
	// and endpoint metrics are a client's: a "server" Collector has only the call metrics, so
	// that a process serving and calling (a relay) registers both in one registry. A
	// LimitsCollector ignores Side: its metrics are always a server's.
	Side string
	// ConstLabels are added to every metric.
	ConstLabels prometheus.Labels
}

// Collector is a prometheus.Collector of snapshots.
type Collector struct {
	src    func() stats.Snapshot
	client bool // Side "client": the net thread and endpoint metrics too

	mu      sync.Mutex
	threads int            // the most net threads a snapshot held
	full    stats.Snapshot // the last snapshot that held that many

	calls, codes, duration                                                      *prometheus.Desc
	queue, wakeups, handBacks, batches, requests, direct, writes, out, in, late *prometheus.Desc
	pending, active, state, timeouts, connFails, reconnects                     *prometheus.Desc
	deactivated, badDatagrams, pushes, pushesDropped, stopRefused               *prometheus.Desc
	sent, replies, epLate, connLosses                                           *prometheus.Desc
	buckets                                                                     []float64
}

// NewCollector returns a Collector that reads src at each scrape.
func NewCollector(src func() stats.Snapshot, o Options) *Collector {
	if o.Namespace == "" {
		o.Namespace = "tarscomm"
	}
	if o.Side == "" {
		o.Side = "client"
	}
	call := []string{"servant", "function", "endpoint"}
	thread := []string{"thread"}
	ep := []string{"servant", "endpoint", "thread"}
	d := func(sub, name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(o.Namespace, sub, name), help, labels, o.ConstLabels)
	}
	c := &Collector{
		src:           src,
		client:        o.Side != "server",
		calls:         d(o.Side, "calls_total", "Calls that ended, by result.", append(call, "result")...),
		codes:         d(o.Side, "server_errors_total", "Replies with a non-zero TARS return code, by code.", append(call, "code")...),
		duration:      d(o.Side, "call_duration_seconds", "Latency of the calls that succeeded.", call...),
		queue:         d("netthread", "queue_depth", "Requests waiting in the net thread's queue.", thread...),
		wakeups:       d("netthread", "wakeups_total", "Times the net thread was woken and drained calls from its queue (deadline ticks not counted).", thread...),
		handBacks:     d("netthread", "hand_backs_total", "Drains after a turn of replies that found calls their callers queued without a wakeup.", thread...),
		batches:       d("netthread", "batches_total", "Drains of the queue that found requests.", thread...),
		requests:      d("netthread", "requests_total", "Requests taken from the queue, or routed directly.", thread...),
		direct:        d("netthread", "direct_requests_total", "Requests their caller routed itself, the net thread being idle (no wakeup to route them); it wrote them too unless they had to wait (a connect, a backlog, a large frame).", thread...),
		writes:        d("netthread", "writes_total", "Writes to connections.", thread...),
		out:           d("netthread", "sent_bytes_total", "Bytes written to connections.", thread...),
		in:            d("netthread", "received_bytes_total", "Bytes read from connections.", thread...),
		late:          d("netthread", "late_replies_total", "Replies for no pending call, dropped.", thread...),
		pending:       d("endpoint", "pending", "Two-way calls waiting for their reply.", ep...),
		active:        d("endpoint", "active", "1 while the health rules keep the endpoint in rotation.", ep...),
		state:         d("endpoint", "state", "1 for the connection's current state.", append(ep, "state")...),
		sent:          d("endpoint", "sent_total", "Calls handed to the endpoint's connections, one-way calls included.", ep...),
		replies:       d("endpoint", "replies_total", "Replies matched to a call waiting for them.", ep...),
		epLate:        d("endpoint", "late_replies_total", "Replies for no call waiting (it timed out or was abandoned): dropped.", ep...),
		connLosses:    d("endpoint", "connection_losses_total", "Established connections that closed.", ep...),
		timeouts:      d("endpoint", "timeouts_total", "Calls expired waiting for a reply.", ep...),
		connFails:     d("endpoint", "connect_failures_total", "Dials that failed.", ep...),
		reconnects:    d("endpoint", "reconnects_total", "Dials after the first.", ep...),
		deactivated:   d("endpoint", "deactivations_total", "Times the health rules took the endpoint out of rotation.", ep...),
		stopRefused:   d("endpoint", "stop_refused_total", "Calls the endpoint's server refused unrun as it stopped; each went to another endpoint once, when one was left.", ep...),
		badDatagrams:  d("endpoint", "bad_datagrams_total", "Datagrams of a udp endpoint dropped for not being exactly one decodable reply.", ep...),
		pushes:        d("endpoint", "pushes_total", "Packets the server pushed on the endpoint's connections.", ep...),
		pushesDropped: d("endpoint", "pushes_dropped_total", "Pushed packets nobody took (no push callback, or its queue was full).", ep...),
	}
	for _, b := range stats.Bounds() {
		c.buckets = append(c.buckets, b.Seconds())
	}
	return c
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.calls
	ch <- c.codes
	ch <- c.duration
	if !c.client {
		return
	}
	for _, d := range []*prometheus.Desc{c.queue, c.wakeups, c.handBacks, c.batches, c.requests, c.direct,
		c.writes, c.out, c.in, c.late, c.pending, c.active, c.state, c.timeouts, c.connFails, c.reconnects, c.deactivated,
		c.badDatagrams, c.pushes, c.pushesDropped, c.stopRefused, c.sent, c.replies, c.epLate, c.connLosses} {
		ch <- d
	}
}

// send sends the metric d with value v and labels. Label values come from outside the process
// (a function name a caller passed on, an endpoint a registry gave): one that is not valid UTF-8
// is mended (U+FFFD for each run of bad bytes) rather than refused, which would panic the scrape (the
// Must forms) or fail it whole. A metric that still cannot be made is left out.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) {
	if m, err := prometheus.NewConstMetric(d, t, v, validLabels(labels)...); err == nil {
		ch <- m
	}
}

// validLabels returns labels with every value valid UTF-8 (in place).
func validLabels(labels []string) []string {
	for i, l := range labels {
		labels[i] = mend(l)
	}
	return labels
}

// mendKeys makes the label values of s's calls and endpoints valid UTF-8 before they are sent,
// so that two keys mended alike (two function names that differ only in their bad bytes) are
// one series: their calls are counted together (stats.Merge), and of two endpoints the first is
// kept. Sending both would make the scrape fail whole ("collected before with the same name and
// label values").
func mendKeys(s *stats.Snapshot) {
	mended := false
	for i := range s.Calls {
		k := &s.Calls[i].Key
		if !utf8.ValidString(k.Servant) || !utf8.ValidString(k.Function) || !utf8.ValidString(k.Endpoint) {
			k.Servant, k.Function, k.Endpoint = mend(k.Servant), mend(k.Function), mend(k.Endpoint)
			mended = true
		}
	}
	if mended {
		s.Calls = stats.Merge(stats.Snapshot{Calls: s.Calls}).Calls
	}
	mended = false
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		if !utf8.ValidString(e.Servant) || !utf8.ValidString(e.Endpoint) {
			e.Servant, e.Endpoint = mend(e.Servant), mend(e.Endpoint)
			mended = true
		}
	}
	if mended {
		type key struct {
			servant, endpoint string
			thread            int
		}
		seen := make(map[key]bool, len(s.Endpoints))
		s.Endpoints = slices.DeleteFunc(s.Endpoints, func(e stats.Endpoint) bool {
			k := key{e.Servant, e.Endpoint, e.Thread}
			dup := seen[k]
			seen[k] = true
			return dup
		})
	}
}

// mend returns l valid UTF-8: U+FFFD for each run of bad bytes.
func mend(l string) string {
	if utf8.ValidString(l) {
		return l
	}
	return strings.ToValidUTF8(l, "\uFFFD")
}

// Collect takes a snapshot and sends its metrics. A snapshot that lacks a net thread
// (Communicator.Stats leaves out one that did not answer in time) is not sent: the last one that
// held every thread is sent again, so that no counter goes down (Prometheus would read a reset).
// Nor is one older than the last kept: two scrapes may overlap (a pair of Prometheus servers), and
// the one whose Stats was taken first may reach the lock last.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.src()
	c.mu.Lock()
	if len(s.Threads) >= c.threads && !s.Taken.Before(c.full.Taken) {
		mendKeys(&s) // before it is kept: a kept snapshot is only read
		c.threads, c.full = len(s.Threads), s
	} else {
		s = c.full
	}
	c.mu.Unlock()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		send(ch, d, prometheus.CounterValue, float64(v), labels)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		send(ch, d, prometheus.GaugeValue, v, labels)
	}
	for i := range s.Calls {
		k := &s.Calls[i]
		for r, n := range k.Results {
			if n != 0 || stats.Result(r) == stats.OK {
				counter(c.calls, n, k.Servant, k.Function, k.Endpoint, stats.Result(r).String())
			}
		}
		for _, cc := range k.Codes {
			code := strconv.Itoa(int(cc.Code))
			if cc.Code == stats.OtherCodes {
				code = "other" // the codes past stats.MaxCodes, together
			}
			counter(c.codes, cc.Count, k.Servant, k.Function, k.Endpoint, code)
		}
		h := &k.Latency
		cum := make(map[float64]uint64, len(c.buckets))
		var run uint64
		for b, ub := range c.buckets {
			run += h.Counts[b]
			cum[ub] = run
		}
		m, err := prometheus.NewConstHistogram(c.duration, h.Count(), h.Sum.Seconds(), cum,
			validLabels([]string{k.Servant, k.Function, k.Endpoint})...)
		if err == nil {
			ch <- m
		}
	}
	if !c.client {
		return
	}
	for _, t := range s.Threads {
		id := strconv.Itoa(t.Index)
		gauge(c.queue, float64(t.QueueDepth), id)
		counter(c.wakeups, t.Wakeups, id)
		counter(c.handBacks, t.HandBacks, id)
		counter(c.batches, t.Batches, id)
		counter(c.requests, t.Requests, id)
		counter(c.direct, t.Direct, id)
		counter(c.writes, t.Writes, id)
		counter(c.out, t.BytesOut, id)
		counter(c.in, t.BytesIn, id)
		counter(c.late, t.LateReplies, id)
	}
	for _, e := range s.Endpoints {
		l := []string{e.Servant, e.Endpoint, strconv.Itoa(e.Thread)}
		gauge(c.pending, float64(e.Pending), l...)
		a := 0.0
		if e.Active {
			a = 1
		}
		gauge(c.active, a, l...)
		gauge(c.state, 1, append(l, e.State.String())...)
		counter(c.sent, e.Sent, l...)
		counter(c.replies, e.Replies, l...)
		counter(c.epLate, e.Late, l...)
		counter(c.connLosses, e.ConnLosses, l...)
		counter(c.timeouts, e.Timeouts, l...)
		counter(c.connFails, e.ConnFails, l...)
		counter(c.reconnects, e.Reconnects, l...)
		counter(c.deactivated, e.Deactivated, l...)
		counter(c.stopRefused, e.StopRefused, l...)
		counter(c.badDatagrams, e.BadDatagrams, l...)
		counter(c.pushes, e.Pushes, l...)
		counter(c.pushesDropped, e.PushesDropped, l...)
	}
}
