package stat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/stats"
)

// Defaults of Options, TarsCpp's where TarsCpp has them.
const (
	DefaultInterval      = 60 * time.Second // TarsCpp report-interval
	DefaultMaxReportSize = 1400             // TarsCpp max-report-size (500..1400)
	DefaultTimeout       = 5 * time.Second  // TarsCpp report-timeout
	DefaultVersion       = "1.0.0"          // after '@' in masterName: this framework's version
	ServerMasterName     = "stat_from_server"
	maxMasterName        = 127 // TarsCpp's MAX_MASTER_NAME_LEN: names and functions in a head
	maxIP                = 50  // TarsCpp's MAX_MASTER_IP_LEN: addresses in a head
)

// Options configure a Reporter. Only ModuleName is required.
type Options struct {
	// ModuleName is this process's TARS module, "App.Server" (TARS "modulename").
	ModuleName string
	// Version follows '@' in masterName. Default DefaultVersion.
	Version string
	// NodeName is sent as masterIp: TARS's node name, empty for a standalone client.
	NodeName string
	// FromClient is bFromClient: true for a client's calls, false for a server's.
	FromClient bool
	// SetDivision is the client's set (TARS "setdivision", name.area.group, given when
	// "enableset" is on): a client's masterName then carries it, as TarsCpp's does
	// ("App.Client.appsz1@1.0.0"). The set of each endpoint called is the endpoint's own (-s,
	// stats.Endpoint.Set): its head's slaveName and slaveSet fields carry it.
	SetDivision string
	// LocalIP replaces the host of the served address as slaveIp when FromClient is false
	// (useful when the server listens on 0.0.0.0).
	LocalIP string
	// Interval is the report interval (TARS "report-interval"). Default DefaultInterval.
	Interval time.Duration
	// MaxReportSize bounds a batch, counted as TarsCpp does: 100 bytes plus the lengths of the
	// head's names per entry (TARS "max-report-size"). Default DefaultMaxReportSize.
	MaxReportSize int
	// Timeout bounds one reportMicMsg call. Default DefaultTimeout.
	Timeout time.Duration
	// OnError, if set, is told of each report that failed (the interval's counts are dropped, as
	// TarsCpp drops them).
	OnError func(error)
	// Threads is the number of net threads a whole snapshot of the source holds (the
	// Communicator's): a report whose snapshot lacks one waits for the next interval, the first
	// report too. 0: a report waits only when its snapshot has fewer threads than the last.
	Threads int
}

func (o *Options) defaults() {
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxReportSize <= 0 {
		o.MaxReportSize = DefaultMaxReportSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
}

// Reporter sends the Delta of a snapshot source to StatF every Interval.
type Reporter struct {
	src  func() stats.Snapshot
	prx  *statf.StatFProxy
	opts Options
	self string // the stat servant's object name: its calls are not reported

	mu   sync.Mutex // serialises Flush
	prev stats.Snapshot
	// carry is a deferred report's snapshot: its periods go into the next (stats.Snapshot.AddPeriods).
	carry  stats.Snapshot
	unsent []map[statf.StatMicMsgHead]statf.StatMicMsgBody // batches a report Close ended never sent
	sets   sets                                            // the endpoints' sets, kept while their calls are counted

	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	run    sync.Once
	ctx    context.Context // the periodic reports'; Close cancels it, ending one under way
	cancel context.CancelFunc
}

// New returns a Reporter of src's counters to prx. It sends nothing until Start or Flush; the
// first report holds everything src counted since it began.
func New(src func() stats.Snapshot, prx *statf.StatFProxy, o Options) *Reporter {
	o.defaults()
	r := &Reporter{src: src, prx: prx, opts: o, stop: make(chan struct{}), done: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if sp := prx.ServantProxy(); sp != nil {
		r.self = sp.Name()
	}
	return r
}

// Start starts the goroutine that reports every Interval. Calling it again does nothing.
func (r *Reporter) Start() {
	r.run.Do(func() {
		go r.loop()
	})
}

func (r *Reporter) loop() {
	defer close(r.done)
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.report(r.ctx)
		}
	}
}

func (r *Reporter) report(ctx context.Context) {
	if err := r.Flush(ctx); err != nil && r.opts.OnError != nil {
		r.opts.OnError(err)
	}
}

// Close stops the goroutine, if started, and sends what was counted since the last report. Call
// it before closing the Communicator the proxy belongs to. It takes at most about two Timeouts
// whatever the stat service does: a report under way gives up, and the last one has one Timeout
// in all. Calling it again does nothing.
func (r *Reporter) Close() error {
	var err error
	r.once.Do(func() {
		close(r.stop)
		r.cancel()
		r.run.Do(func() { close(r.done) }) // never started: nothing to wait for
		<-r.done
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
		defer cancel()
		err = r.Flush(ctx)
	})
	return err
}

// Flush reports at once what was counted since the last report: one reportMicMsg per batch, each
// within Timeout and ctx. The first batch that gets no answer ends the report (the stat service
// is not answering: the next would wait as long), and what it and the batches after it held is
// lost, as TarsCpp loses it; but when ctx was cancelled (Close ending a report under way), the
// batches not sent yet are kept for the next Flush, Close's final one, which sends them first.
// It returns the errors of the batches that failed.
func (r *Reporter) Flush(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.src()
	if want := max(r.opts.Threads, len(r.prev.Threads)); len(cur.Threads) < want {
		// A net thread did not answer in time (Communicator.Stats leaves it out): its calls
		// would read as counters gone back to 0 (or, in the first report, be sent later with
		// the others' again), and the next report would send them twice. This report waits
		// for the next interval. The net threads that answered have ended their periods (a
		// source may end them, as the Communicator's does): what they held goes into the next.
		r.carry = stats.Merge(r.carry, cur) // every key of both: one deferral may miss another's
		return fmt.Errorf("stat: %d of %d net threads answered: report deferred to the next interval", len(cur.Threads), want)
	}
	cur.AddPeriods(&r.carry)
	r.carry = stats.Snapshot{}
	delta := cur.Delta(r.prev)
	r.prev = cur
	r.sets.learn(&cur)
	batches := append(r.unsent, messages(delta, r.opts, r.self, r.sets.of)...)
	r.unsent = nil
	var errs []error
	for i, batch := range batches {
		if errors.Is(ctx.Err(), context.Canceled) {
			// Close cancelled this report before the batch went (a call on an ended ctx is not
			// sent): it and the rest are kept for Close's final report.
			r.unsent = batches[i:]
			errs = append(errs, fmt.Errorf("stat: report cancelled before batch %d of %d: %w", i+1, len(batches), ctx.Err()))
			break
		}
		cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		ret, err := r.prx.ReportMicMsg(cctx, batch, r.opts.FromClient)
		cancel()
		if err != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				r.unsent = batches[i+1:] // (batch i may have arrived: not sent again)
			}
			errs = append(errs, fmt.Errorf("stat: report of %d entries (batch %d of %d; the rest not sent): %w", len(batch), i+1, len(batches), err))
			break
		}
		if ret != 0 {
			errs = append(errs, fmt.Errorf("stat: reportMicMsg of %d entries returned %d", len(batch), ret))
		}
	}
	return errors.Join(errs...)
}

// Messages builds the reportMicMsg maps of delta, split in batches by o.MaxReportSize, skipping
// the calls to servant skip. Heads are built as the package doc says; o's zero fields take their
// defaults.
func Messages(delta stats.Snapshot, o Options, skip string) []map[statf.StatMicMsgHead]statf.StatMicMsgBody {
	var s sets
	s.learn(&delta)
	return messages(delta, o, skip, s.of)
}

// messages is Messages with the endpoints' sets given by setOf.
func messages(delta stats.Snapshot, o Options, skip string, setOf func(servant, endpoint string) string) []map[statf.StatMicMsgHead]statf.StatMicMsgBody {
	o.defaults()
	masterName := o.ModuleName
	if set, ok := setParts(o.SetDivision); ok && o.FromClient {
		masterName += "." + set[0] + set[1] + set[2]
	}
	masterName = limit(masterName + "@" + o.Version)
	all := make(map[statf.StatMicMsgHead]statf.StatMicMsgBody)
	var order []statf.StatMicMsgHead
	for i := range delta.Calls {
		c := &delta.Calls[i]
		if c.Servant == skip && skip != "" {
			continue
		}
		h := head(&c.Key, &o, masterName, setOf(c.Servant, c.Endpoint))
		b := body(&c.Counters)
		if old, ok := all[h]; ok {
			b = mergeBody(old, b)
		} else {
			order = append(order, h)
		}
		all[h] = b
	}
	var out []map[statf.StatMicMsgHead]statf.StatMicMsgBody
	var cur map[statf.StatMicMsgHead]statf.StatMicMsgBody
	size := 0
	for _, h := range order {
		n := 100 + len(h.MasterName) + len(h.SlaveName) + len(h.InterfaceName) + len(h.SlaveSetName) + len(h.SlaveSetArea) + len(h.SlaveSetID)
		if cur != nil && size+n > o.MaxReportSize {
			out = append(out, cur)
			cur = nil
		}
		if cur == nil {
			cur = make(map[statf.StatMicMsgHead]statf.StatMicMsgBody)
			size = 0
		}
		cur[h] = all[h]
		size += n
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// sets knows each endpoint's set, from the snapshots' Endpoints: an endpoint that left its list
// (no longer in Endpoints) keeps its set while its calls are counted.
type sets map[[2]string]string

// learn records the sets of s's endpoints and forgets those of endpoints s neither lists nor
// counts calls of.
func (m *sets) learn(s *stats.Snapshot) {
	seen := make(map[[2]string]bool, len(s.Endpoints))
	for _, e := range s.Endpoints {
		k := [2]string{e.Servant, e.Endpoint}
		seen[k] = true
		if e.Set != "" {
			if *m == nil {
				*m = sets{}
			}
			(*m)[k] = e.Set
		}
	}
	for _, c := range s.Calls {
		seen[[2]string{c.Servant, c.Endpoint}] = true
	}
	for k := range *m {
		if !seen[k] {
			delete(*m, k)
		}
	}
}

// of returns the set of servant's endpoint, "" if none is known.
func (m *sets) of(servant, endpoint string) string { return (*m)[[2]string{servant, endpoint}] }

// setParts splits a set division into its name, area and group, as TarsCpp reads it for stat
// heads: false unless it has three parts and neither name nor area is "*".
func setParts(set string) ([]string, bool) {
	p := strings.Split(set, ".")
	if len(p) != 3 || p[0] == "*" || p[1] == "*" {
		return nil, false
	}
	return p, true
}

// limit cuts a name to the length TarsCpp allows in a stat head (StatReport::trimAndLimitStr:
// without leading and trailing CR and tab, at most maxMasterName bytes).
func limit(name string) string { return limitTo(name, maxMasterName) }

// limitIP is limit for an address (MAX_MASTER_IP_LEN): a host from a registry, DNS or etcd may
// be a long name.
func limitIP(host string) string { return limitTo(host, maxIP) }

func limitTo(s string, n int) string {
	s = strings.Trim(s, "\r\t")
	if len(s) > n {
		return s[:n]
	}
	return s
}

func head(k *stats.Key, o *Options, masterName, endpointSet string) statf.StatMicMsgHead {
	host, port := splitAddr(k.Endpoint)
	if !o.FromClient {
		if o.LocalIP != "" {
			host = o.LocalIP
		}
		return statf.StatMicMsgHead{
			MasterName:    ServerMasterName,
			SlaveName:     limit(o.ModuleName),
			InterfaceName: limit(k.Function),
			SlaveIp:       limitIP(host),
			SlavePort:     port,
		}
	}
	h := statf.StatMicMsgHead{
		MasterName:    masterName,
		SlaveName:     limit(slaveName(k.Servant)), // as TarsCpp's initStatHead, set or not
		InterfaceName: limit(k.Function),
		MasterIp:      limitIP(o.NodeName),
		SlaveIp:       limitIP(host),
		SlavePort:     port,
	}
	if set, ok := setParts(endpointSet); ok {
		h.SlaveSetName, h.SlaveSetArea, h.SlaveSetID = set[0], set[1], set[2]
		h.SlaveName = limit(h.SlaveName + "." + set[0] + set[1] + set[2])
	}
	return h
}

// slaveName returns the first two dot parts of an object name: "App.Server" of
// "App.Server.Obj".
func slaveName(obj string) string {
	i := strings.IndexByte(obj, '.')
	if i < 0 {
		return obj
	}
	if j := strings.IndexByte(obj[i+1:], '.'); j >= 0 {
		return obj[:i+1+j]
	}
	return obj
}

func splitAddr(addr string) (string, int32) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	port, _ := strconv.Atoi(p)
	return host, int32(port)
}

func body(c *stats.Counters) statf.StatMicMsgBody {
	b := statf.StatMicMsgBody{
		Count:         sat32(c.Results[stats.OK]),
		TimeoutCount:  sat32(c.Results[stats.Timeout]),
		ExecCount:     sat32(c.Calls() - c.Results[stats.OK] - c.Results[stats.Timeout]),
		IntervalCount: make(map[int32]int32, len(stats.TarsBounds)),
		TotalRspTime:  c.Latency.Sum.Milliseconds(),
		MaxRspTime:    sat32(uint64(max(c.Latency.Max.Milliseconds(), 0))),
		MinRspTime:    sat32(uint64(max(c.Latency.Min.Milliseconds(), 0))),
	}
	for _, ms := range stats.TarsBounds {
		b.IntervalCount[ms] = 0
	}
	bounds := stats.Bounds()
	for i, n := range c.Latency.Counts {
		if n == 0 || i >= len(bounds) {
			continue // 3 s or more: in no TARS bucket
		}
		// The TARS point of bucket i: the smallest at or above its upper bound (every bound
		// up to 3 s is below or equal to some point).
		j := 0
		for time.Duration(stats.TarsBounds[j])*time.Millisecond < bounds[i] {
			j++
		}
		b.IntervalCount[stats.TarsBounds[j]] = sat32(uint64(b.IntervalCount[stats.TarsBounds[j]]) + n)
	}
	return b
}

// sat32 returns n as the protocol's int32, math.MaxInt32 when it is larger: a count or a time in
// milliseconds past 2^31 (a latency over 24.8 days) would otherwise wrap negative.
func sat32(n uint64) int32 { return int32(min(n, math.MaxInt32)) }

// mergeBody adds b to a: sums, the greater max, the smaller non-zero min (TarsCpp's rule).
func mergeBody(a, b statf.StatMicMsgBody) statf.StatMicMsgBody {
	a.Count += b.Count
	a.TimeoutCount += b.TimeoutCount
	a.ExecCount += b.ExecCount
	for k, v := range b.IntervalCount {
		a.IntervalCount[k] += v
	}
	a.TotalRspTime += b.TotalRspTime
	a.MaxRspTime = max(a.MaxRspTime, b.MaxRspTime)
	if a.MinRspTime == 0 || (b.MinRspTime != 0 && b.MinRspTime < a.MinRspTime) {
		a.MinRspTime = b.MinRspTime
	}
	return a
}
