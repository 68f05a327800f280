package registry

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TarsCpp's EndpointManager intervals (see the package documentation).
const (
	defaultRefresh     = 60 * time.Second
	failInterval       = 2 * time.Second
	activeEmptyRetry   = 10 * time.Second
	slowFailInterval   = 30 * time.Second
	queryTimeout       = 5 * time.Second
	failuresBeforeSlow = 3
)

// Options configure a Registry. Zero values take TarsCpp's.
type Options struct {
	Refresh       time.Duration // after a good answer; default 60s
	FailRetry     time.Duration // after a failure; default 2s
	SlowFailRetry time.Duration // after more than 3 failures in a row; default 30s
	EmptyRetry    time.Duration // after an empty active list; default 10s
	QueryTimeout  time.Duration // one query; default 5s
	// Cache is the endpoint-cache file; "" for none. Locator (the locator string) keys its
	// entries, so that one file can serve several registries.
	Cache   string
	Locator string
	Log     *zap.Logger
}

// Registry is a naming.Source over a QueryF proxy, and a naming.Reporter. Safe for concurrent
// use.
type Registry struct {
	q     *queryf.QueryFProxy
	opts  Options
	log   *zap.Logger
	cache *cache

	badOnce sync.Once // log a skipped endpoint once per Registry
	others  int       // the locator's endpoints but one: a query's retries after lost connections
}

// New returns the source asking q (a proxy to tars.tarsregistry.QueryObj).
func New(q *queryf.QueryFProxy, o Options) *Registry {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Refresh, defaultRefresh)
	def(&o.FailRetry, failInterval)
	def(&o.SlowFailRetry, slowFailInterval)
	def(&o.EmptyRetry, activeEmptyRetry)
	def(&o.QueryTimeout, queryTimeout)
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	r := &Registry{q: q, opts: o, log: o.Log.Named("registry")}
	if t, err := endpoint.Parse(o.Locator); err == nil {
		r.others = max(len(t.Endpoints)-1, 0)
	}
	if o.Cache != "" {
		r.cache = newCache(o.Cache, o.Locator)
	}
	return r
}

// Watch implements naming.Source: it follows q on a goroutine of its own until stop.
func (r *Registry) Watch(q naming.Query, push func(naming.List)) (stop func()) {
	return r.WatchReporting(q, push, nil)
}

// WatchReporting implements naming.Reporter: Watch, and fail (if not nil) is called with each
// failed query.
func (r *Registry) WatchReporting(q naming.Query, push func(naming.List), fail func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.follow(ctx, q, push, fail)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Outcomes of one query, for the schedule.
const (
	answered = iota // active endpoints
	empty           // no active endpoint
	failed          // an error, a non-zero return code, or no answer in time
)

// wait returns how long to wait before the next query after outcome, fails being the number of
// failures in a row (the last one included): TarsCpp's schedule (see the package doc).
func (o *Options) wait(outcome, fails int) time.Duration {
	switch {
	case outcome == answered:
		return o.Refresh
	case outcome == empty:
		return o.EmptyRetry
	case fails > failuresBeforeSlow:
		return o.SlowFailRetry
	}
	return o.FailRetry
}

// follow queries q on TarsCpp's schedule until ctx ends.
func (r *Registry) follow(ctx context.Context, q naming.Query, push func(naming.List), fail func(error)) {
	fails, have := 0, false
	// problem is the failure last warned of ("" after an answer): a registry down for an hour
	// is one warning per servant and kind of failure, not one per retry, and an info line when
	// it answers again (as the dns and etcd sources).
	problem := ""
	// turn moves the object's queries to the next locator endpoint after a query that brought
	// no active endpoint (an error, a return code, no answer in time, an empty list): a registry
	// that answers but cannot serve is not asked again and again while another is listed, as
	// TarsCpp's round robin over the locator does not. A registry that answers keeps the queries.
	var turn uint64
	// The cache first, as TarsCpp's QueryEpBase loads it when the proxy is made: calls go to the
	// last good list while the registry is slow or down, and an empty answer does not replace it.
	if r.cache != nil {
		if cl, ok := r.cache.load(q); ok {
			r.log.Info("using the endpoint cache until the registry answers", zap.String("servant", q.Object), zap.Int("active", len(cl.Active)))
			push(cl)
			have = true
		}
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l, err := r.query(ctx, q, turn)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			fails++
			turn++
			wait = r.opts.wait(failed, fails)
			if k := failureKind(err); k != problem {
				problem = k
				r.log.Warn("registry query failed; keeping the last list (logged once until it changes or the registry answers)",
					zap.String("servant", q.Object), zap.Int("consecutive", fails), zap.Duration("retry_in", wait), zap.Error(err))
			} else {
				r.log.Debug("registry query failed; keeping the last list", zap.String("servant", q.Object), zap.Int("consecutive", fails), zap.Duration("retry_in", wait), zap.Error(err))
			}
			if fail != nil {
				fail(fmt.Errorf("registry query failed (%d in a row): %w", fails, err))
			}
			if !have && r.cache != nil {
				if cl, ok := r.cache.load(q); ok {
					r.log.Info("using the endpoint cache", zap.String("servant", q.Object), zap.Int("active", len(cl.Active)))
					push(cl)
					have = true
				}
			}
		case len(l.Active) == 0:
			r.answered(q, &fails, &problem)
			turn++
			wait = r.opts.wait(empty, 0)
			if !have {
				push(l)
				have = true
			}
		default:
			r.answered(q, &fails, &problem)
			wait = r.opts.wait(answered, 0)
			// The cache first: whoever sees the list pushed may read the file next.
			if r.cache != nil {
				if err := r.cache.store(q, l); err != nil {
					r.log.Warn("endpoint cache not written", zap.Error(err))
				}
			}
			push(l)
			have = true
		}
		t.Reset(wait)
	}
}

// answered ends a run of failed queries of q, if any, with an info line.
func (r *Registry) answered(q naming.Query, fails *int, problem *string) {
	if *problem != "" {
		r.log.Info("registry answers again", zap.String("servant", q.Object), zap.Int("consecutive", *fails))
	}
	*fails, *problem = 0, ""
}

// failureKind is err's text with its numbers left out (ports, elapsed times, return codes), so
// that the same failure seen through another locator endpoint or after another wait is one kind.
func failureKind(err error) string {
	return strings.Map(func(c rune) rune {
		if c >= '0' && c <= '9' {
			return '#'
		}
		return c
	}, err.Error())
}

// Query asks the registry for q, within the query timeout. A query is hashed by q (so the
// queries of one object go through one net thread and one locator endpoint, as TarsCpp's go
// through the servant's own net thread), and one that failed on a lost or refused connection is
// asked again at once of the next locator endpoint, up to once per other one. (A query is a
// read: asking twice is safe.)
func (r *Registry) Query(ctx context.Context, q naming.Query) (naming.List, error) {
	return r.query(ctx, q, 0)
}

// query is Query starting turn locator endpoints after q's own: the hash's code plus turn, which
// the mod hash over the locator's endpoints maps to the turn-th next one.
func (r *Registry) query(ctx context.Context, q naming.Query, turn uint64) (naming.List, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.QueryTimeout)
	defer cancel()
	var (
		ret              int32
		active, inactive []endpointf.EndpointF
		err              error
	)
	h := fnv.New64a()
	_, _ = h.Write([]byte(q.Object + "|" + q.Set))
	// The query's own timeout, too: the proxy's sync-invoke-timeout (3s by default) would
	// otherwise end it before QueryTimeout.
	code := h.Sum64() + turn
	for try := 0; ; try++ {
		opts := []servantproxy.CallOption{servantproxy.WithTimeout(r.opts.QueryTimeout), servantproxy.WithHash(code + uint64(try))}
		if q.Set != "" {
			ret, active, inactive, err = r.q.FindObjectByIdInSameSet(ctx, q.Object, q.Set, opts...)
		} else {
			ret, active, inactive, err = r.q.FindObjectByIdInSameGroup(ctx, q.Object, opts...)
		}
		if err == nil || try >= r.others || ctx.Err() != nil || !errors.Is(err, servantproxy.ErrConnection) {
			break
		}
	}
	if err != nil {
		return naming.List{}, err
	}
	if ret != 0 {
		return naming.List{}, fmt.Errorf("%w: %s: return code %d", errRegistry, q.Object, ret)
	}
	// In TarsCpp's order: a registry owes none (TarsCpp keeps them in sets), and the same
	// endpoints listed in another order would be a new list to every proxy of the object.
	l := naming.List{Active: r.convert(q, active), Inactive: r.convert(q, inactive)}
	endpoint.SortTars(l.Active)
	endpoint.SortTars(l.Inactive)
	return l, nil
}

var errRegistry = errors.New("registry refused the query")

// convert turns the registry's endpoints into Endpoints: udp (istcp 0), tcp (istcp 1) and ssl
// (istcp 2) ones. One without a usable transport, host and port is left out, and the first is
// logged.
func (r *Registry) convert(q naming.Query, in []endpointf.EndpointF) []endpoint.Endpoint {
	out := make([]endpoint.Endpoint, 0, len(in))
	for _, f := range in {
		e, verdict := usable(f)
		if verdict == skipBad {
			r.badOnce.Do(func() {
				r.log.Warn("registry lists an endpoint with no usable address; skipping it (and the next ones, not logged)",
					zap.String("servant", q.Object), zap.String("host", f.Host), zap.Int32("port", f.Port), zap.Int32("istcp", f.Istcp))
			})
			continue
		}
		out = append(out, e)
	}
	return out
}

// Verdicts of usable.
const (
	use = iota
	skipBad
)

// usable converts f (FromEndpointF) and says whether it is an endpoint tarscomm can call: udp, tcp or ssl, with a host and a
// port in 1..65535, whose host and set name are text (UTF-8) and whose string form says exactly
// what it is (endpoint.Endpoint.Check). The last two keep what a broken registry may send (a host
// "10.0.0.1 -p 9", a negative timeout, a set name with ':' or with bytes JSON would replace) from
// being dialled as one endpoint and written to the endpoint cache as another, or not read back
// from it at all.
func usable(f endpointf.EndpointF) (endpoint.Endpoint, int) {
	switch {
	case f.Istcp < 0 || f.Istcp > 2, f.Host == "", f.Port <= 0, f.Port > 65535:
		return endpoint.Endpoint{}, skipBad
	case !utf8.ValidString(f.Host) || !utf8.ValidString(f.SetId):
		return endpoint.Endpoint{}, skipBad
	}
	e := FromEndpointF(f)
	if e.Check() != nil {
		return endpoint.Endpoint{}, skipBad
	}
	return e, use
}

// FromEndpointF converts a registry EndpointF (istcp 0 udp, 1 tcp, 2 ssl). A weight of 0 on an
// endpoint that is not statically weighted means "absent" (-1), as in TarsCpp's TC_Endpoint, and
// so does a negative weight on any endpoint.
func FromEndpointF(f endpointf.EndpointF) endpoint.Endpoint {
	e := endpoint.Endpoint{
		Proto:       endpoint.TCP,
		Host:        f.Host,
		Port:        int(f.Port),
		Timeout:     time.Duration(f.Timeout) * time.Millisecond,
		Grid:        int(f.Grid),
		Qos:         int(f.Qos),
		Weight:      int(f.Weight),
		WeightType:  int(f.WeightType),
		AuthType:    int(f.AuthType),
		SetDivision: f.SetId,
	}
	switch f.Istcp {
	case 0:
		e.Proto = endpoint.UDP
	case 2:
		e.Proto = endpoint.SSL
	}
	if e.Weight < 0 || e.WeightType != endpoint.WeightStatic && e.Weight == 0 {
		e.Weight = -1
	}
	return e
}

// ToEndpointF is FromEndpointF's inverse, for registries written in Go (tests, tools).
func ToEndpointF(e endpoint.Endpoint) endpointf.EndpointF {
	f := endpointf.EndpointF{
		Host: e.Host, Port: int32(e.Port), Timeout: int32(e.Timeout.Milliseconds()), Istcp: 1,
		Grid: int32(e.Grid), Qos: int32(e.Qos), WeightType: int32(e.WeightType),
		AuthType: int32(e.AuthType), SetId: e.SetDivision, Groupworkid: -1,
	}
	switch e.Proto {
	case endpoint.UDP:
		f.Istcp = 0
	case endpoint.SSL:
		f.Istcp = 2
	}
	if e.Weight >= 0 {
		f.Weight = int32(e.Weight)
	}
	return f
}
