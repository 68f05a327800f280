package stats

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result says how a call ended.
type Result uint8

// The results a call can end with.
const (
	OK          Result = iota // a reply with TARS return code 0
	Timeout                   // the deadline passed before a reply
	Connection                // the connection could not be made or was lost before a reply
	QueueFull                 // a net-thread queue, a connection's send buffer or the async limits (asyncqueuecap, async-inflight-limit) were full: not sent
	NoEndpoint                // the servant had no endpoint: not sent
	Overload                  // the servant's calls in flight reached max-inflight (ErrOverload): not sent
	ServerError               // a reply with a non-zero TARS return code (counted by code too)
	Closed                    // the communicator was closed before the call ended
	Cancelled                 // the caller's context was cancelled before the call ended
	Refused                   // the request could not be encoded, or the endpoint chosen could not take it (above max-packet-size or a UDP datagram's size, no room for its request id): not sent
	numResults
)

// NumResults is the number of Result values.
const NumResults = int(numResults)

var resultNames = [NumResults]string{"ok", "timeout", "connection", "queue_full", "no_endpoint", "overload", "server_error", "closed", "cancelled", "refused"}

// String returns the result's name as a metric label writes it: "ok", "timeout", "queue_full", ...
func (r Result) String() string {
	if int(r) < NumResults {
		return resultNames[r]
	}
	return "unknown"
}

// Results returns every Result, in order.
func Results() []Result {
	rs := make([]Result, NumResults)
	for i := range rs {
		rs[i] = Result(i)
	}
	return rs
}

// MaxCodes bounds the return codes counted apart for one (servant, function, endpoint): the
// server chooses its codes, and each new one would hold memory (and a metric series, a row of
// the debug page) for good. Replies with a code beyond the first MaxCodes are counted together,
// under OtherCodes.
const MaxCodes = 64

// MaxFunctions bounds the functions counted apart for one (servant, endpoint) by one recorder (a
// net thread's, or Shared): a gateway relays the function names its own callers choose, and each
// new one would hold memory (and a metric series, a row of the debug page) while the endpoint is
// listed. Calls of a function beyond the first MaxFunctions are counted together, under
// OtherFunctions.
const MaxFunctions = 1024

// OtherFunctions is the function name under which the calls of functions that came after the
// first MaxFunctions are counted (no TARS function is named so: it is no identifier).
const OtherFunctions = "(other)"

// OtherCodes is the code under which the replies whose codes came after the first MaxCodes are
// counted (math.MinInt32: a code no TARS server sends).
const OtherCodes int32 = math.MinInt32

// CodeCount is the number of replies that carried one TARS return code.
type CodeCount struct {
	Code  int32  `json:"code"`
	Count uint64 `json:"count"`
}

// Counters are the counts of one (servant, function, endpoint).
type Counters struct {
	// Results[r] is the number of calls that ended with r.
	Results [NumResults]uint64
	// Codes are the ServerError replies by TARS return code, sorted by code.
	Codes []CodeCount
	// Latency holds the time from the call's start to its reply, of the calls that succeeded.
	Latency Histogram
	// Period holds the least and the greatest of those latencies since the recorder's period
	// last ended (Recorder.EndPeriod): the interval's maxRspTime and minRspTime of a TARS stat
	// report. Snapshot.Delta gives them to the delta's Latency when they hold exactly its
	// samples, which is so when the earlier snapshot was taken as the period ended; otherwise
	// the delta's Min and Max are Histogram.Sub's estimates.
	Period Extremes `json:"-"`
	// Gen numbers the counters' life: counters made anew (for a pair Recorder.Forget dropped,
	// counted again) have a higher one, so that Snapshot.Delta takes them whole even when they
	// have grown past the old ones. Merged counters have the lowest of their parts'; 0: unknown.
	Gen uint64 `json:"-"`
}

// gens numbers the Counters a Recorder makes, in every Recorder (Counters.Gen).
var gens atomic.Uint64

// Calls returns the number of calls that ended, whatever their result.
func (c *Counters) Calls() uint64 {
	var n uint64
	for _, v := range c.Results {
		n += v
	}
	return n
}

// Failures returns the calls that did not succeed.
func (c *Counters) Failures() uint64 { return c.Calls() - c.Results[OK] }

func (c *Counters) record(res Result, code int32, d time.Duration) {
	if res >= numResults {
		res = ServerError
	}
	c.Results[res]++
	switch res {
	case OK:
		c.Latency.Observe(d)
		c.Period.observe(max(d, 0))
	case ServerError:
		c.addCode(code, 1)
	}
}

func (c *Counters) addCode(code int32, n uint64) {
	for i := range c.Codes {
		if c.Codes[i].Code == code {
			c.Codes[i].Count += n
			return
		}
	}
	if len(c.Codes) >= MaxCodes && code != OtherCodes {
		c.addCode(OtherCodes, n)
		return
	}
	i, _ := slices.BinarySearchFunc(c.Codes, code, func(cc CodeCount, code int32) int { return int(cc.Code) - int(code) })
	c.Codes = slices.Insert(c.Codes, i, CodeCount{code, n})
}

// add merges o into c.
func (c *Counters) add(o *Counters) {
	if o.Gen != 0 && (c.Gen == 0 || o.Gen < c.Gen) {
		c.Gen = o.Gen
	}
	for i, v := range o.Results {
		c.Results[i] += v
	}
	for _, cc := range o.Codes {
		c.addCode(cc.Code, cc.Count)
	}
	c.Latency.Add(&o.Latency)
	c.Period.Add(o.Period)
}

// clone returns a copy of c that shares no memory with it.
func (c *Counters) clone() Counters {
	out := *c
	out.Codes = slices.Clone(c.Codes)
	return out
}

// sub returns c minus prev, an earlier state of the same counters: all of c when they are not
// (made anew since: another Gen, or a count lower than prev's).
func (c *Counters) sub(prev *Counters) Counters {
	if c.Gen != prev.Gen {
		return c.clone()
	}
	for i := range c.Results {
		if c.Results[i] < prev.Results[i] { // not an earlier state: all of c is new
			return c.clone()
		}
	}
	var d Counters
	for i := range c.Results {
		d.Results[i] = c.Results[i] - prev.Results[i]
	}
	for _, cc := range c.Codes {
		n := cc.Count
		for _, p := range prev.Codes {
			if p.Code == cc.Code {
				n -= min(n, p.Count)
			}
		}
		if n != 0 {
			d.Codes = append(d.Codes, CodeCount{cc.Code, n})
		}
	}
	d.Latency = c.Latency.Sub(prev.Latency)
	d.Period = c.Period
	if n := d.Latency.Count(); n != 0 && c.Period.N == n {
		d.Latency.Min, d.Latency.Max = c.Period.Min, c.Period.Max // exact: the period is the interval
	}
	return d
}

// Recorder counts the calls that end on one goroutine, a net thread's loop. It takes no lock:
// every method must be called on that goroutine (Shared is the locked variant). The zero value
// is ready.
type Recorder struct {
	eps  map[epKey]*EndpointRecorder
	list []*EndpointRecorder // in creation order
}

type epKey struct{ servant, endpoint string }

// Endpoint returns the recorder of calls from servant to endpoint ("host:port", or "" for calls
// that ended before one was chosen), creating it on first use. Keep it: recording through it
// costs one map lookup by function name.
func (r *Recorder) Endpoint(servant, endpoint string) *EndpointRecorder {
	k := epKey{servant, endpoint}
	if e := r.eps[k]; e != nil {
		return e
	}
	if r.eps == nil {
		r.eps = make(map[epKey]*EndpointRecorder)
	}
	e := &EndpointRecorder{servant: servant, endpoint: endpoint, funcs: make(map[string]*Counters)}
	r.eps[k] = e
	r.list = append(r.list, e)
	return e
}

// Has reports whether the recorder keeps counts of calls from servant to endpoint.
func (r *Recorder) Has(servant, endpoint string) bool {
	_, ok := r.eps[epKey{servant, endpoint}]
	return ok
}

// Forget drops the counts of the (servant, endpoint) pairs drop reports: an endpoint that left
// its servant's list long ago must not hold memory (and a metric series, a row of the debug
// page) for good. Counts recorded for a pair later start again from zero, as after a restart
// (Snapshot.Delta and Prometheus take a count that went down for a reset). An EndpointRecorder
// of a dropped pair counts nothing more (Forgotten): ask Endpoint for a new one.
func (r *Recorder) Forget(drop func(servant, endpoint string) bool) {
	r.list = slices.DeleteFunc(r.list, func(e *EndpointRecorder) bool {
		if !drop(e.servant, e.endpoint) {
			return false
		}
		e.forgotten = true
		delete(r.eps, epKey{e.servant, e.endpoint})
		return true
	})
}

// Record counts one call of servant's function to endpoint: Endpoint(servant,
// endpoint).Record(function, res, code, d). Prefer keeping the EndpointRecorder.
func (r *Recorder) Record(servant, function, endpoint string, res Result, code int32, d time.Duration) {
	r.Endpoint(servant, endpoint).Record(function, res, code, d)
}

// Snapshot returns a copy of every counter, as Snapshot.Calls sorted by key. It sets Taken to
// now; Threads and Endpoints are left for the caller to fill.
func (r *Recorder) Snapshot() Snapshot {
	return Snapshot{Taken: time.Now(), Calls: r.AppendCalls(nil)}
}

// EndPeriod begins a new period: every Counters' Period is emptied. A snapshot taken just before
// (on the same goroutine, with nothing recorded between) and the next one taken so have Deltas
// whose Latency Min and Max are exact. One reader should end periods: a stat reporter.
func (r *Recorder) EndPeriod() {
	for _, e := range r.list {
		for _, c := range e.funcs {
			c.Period = Extremes{}
		}
	}
}

// AppendCalls appends a copy of every counter to dst, sorted by key, and returns it.
func (r *Recorder) AppendCalls(dst []Call) []Call {
	start := len(dst)
	for _, e := range r.list {
		for fn, c := range e.funcs {
			dst = append(dst, Call{Key: Key{Servant: e.servant, Function: fn, Endpoint: e.endpoint}, Counters: c.clone()})
		}
	}
	sortCalls(dst[start:])
	return dst
}

// EndpointRecorder counts the calls of one servant to one endpoint, by function. It belongs to
// its Recorder's goroutine.
type EndpointRecorder struct {
	servant, endpoint string
	funcs             map[string]*Counters
	lastName          string    // the function of the latest Record, kept to skip the map
	last              *Counters // its counters
	forgotten         bool      // its Recorder forgot it (Forget)
}

// Forgotten reports whether its Recorder dropped e (Recorder.Forget): what it records is counted
// nowhere.
func (e *EndpointRecorder) Forgotten() bool { return e.forgotten }

// Servant returns the servant it counts for.
func (e *EndpointRecorder) Servant() string { return e.servant }

// Addr returns the endpoint it counts for.
func (e *EndpointRecorder) Addr() string { return e.endpoint }

// Record counts one call of function that ended with res after d: the TARS return code for a
// ServerError (ignored otherwise), and d's latency in the histogram for an OK. It allocates only
// the first time function is seen (the name is kept, cloned); past MaxFunctions functions, a new
// one is counted under OtherFunctions.
func (e *EndpointRecorder) Record(function string, res Result, code int32, d time.Duration) {
	c := e.last
	if c == nil || function != e.lastName {
		if c = e.funcs[function]; c == nil {
			if len(e.funcs) >= MaxFunctions {
				function = OtherFunctions
				c = e.funcs[function]
			}
			if c == nil {
				c = &Counters{Gen: gens.Add(1)}
				function = strings.Clone(function)
				e.funcs[function] = c
			}
		}
		e.lastName, e.last = function, c
	}
	c.record(res, code, d)
}

// Shared is a Recorder behind a mutex, for the calls that fail before they reach a loop (a full
// queue seen by the caller, a closed communicator). Any goroutine may use it; the zero value is
// ready.
type Shared struct {
	mu sync.Mutex
	r  Recorder
}

// Record counts one call, as Recorder.Record does.
func (s *Shared) Record(servant, function, endpoint string, res Result, code int32, d time.Duration) {
	s.mu.Lock()
	s.r.Record(servant, function, endpoint, res, code, d)
	s.mu.Unlock()
}

// Snapshot returns a copy of the counters, as Recorder.Snapshot does.
func (s *Shared) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Snapshot()
}

// SnapshotEndingPeriod returns Snapshot and ends the period (Recorder.EndPeriod) at once, under
// the mutex: nothing recorded falls between them.
func (s *Shared) SnapshotEndingPeriod() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.r.Snapshot()
	s.r.EndPeriod()
	return snap
}
