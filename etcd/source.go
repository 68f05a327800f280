package etcd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// Debounce is the default window in which changes to one object give one push.
const Debounce = 100 * time.Millisecond

// Source is a naming.Source over etcd (see the package doc for the key layout). Its methods are
// safe for concurrent use. It does not own the client: closing the client ends its watches'
// reads, and their stop functions still return.
type Source struct {
	cli      *clientv3.Client
	prefix   string
	debounce time.Duration
	log      *zap.Logger
}

// Option configures a Source.
type Option func(*Source)

// WithDebounce sets the window in which changes give one push (Debounce by default); 0 pushes
// after every watch response.
func WithDebounce(d time.Duration) Option { return func(s *Source) { s.debounce = max(d, 0) } }

// WithLogger sets the logger of watch errors and unparsable values (none by default).
func WithLogger(l *zap.Logger) Option { return func(s *Source) { s.log = l } }

// New returns a Source reading the keys under prefix (e.g. "/tars") through cli.
func New(cli *clientv3.Client, prefix string, opts ...Option) *Source {
	s := &Source{cli: cli, prefix: strings.TrimSuffix(prefix, "/"), debounce: Debounce, log: zap.NewNop()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Key returns the key of ep for object under prefix: "<prefix>/<object>/<host:port>".
func Key(prefix, object string, ep endpoint.Endpoint) string {
	return objectPrefix(prefix, object) + ep.Addr()
}

func objectPrefix(prefix, object string) string {
	return strings.TrimSuffix(prefix, "/") + "/" + object + "/"
}

// Watch implements naming.Source. It returns at once; the first list is pushed when the first
// read of etcd answers.
func (s *Source) Watch(q naming.Query, push func(naming.List)) (stop func()) {
	return s.WatchReporting(q, push, nil)
}

// WatchReporting implements naming.Reporter: Watch that also calls fail with each failed read or
// watch of etcd (an unreachable etcd: its connection error), so that a call waiting for its
// first list says why it has none.
func (s *Source) WatchReporting(q naming.Query, push func(naming.List), fail func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{s: s, q: q, push: push, fail: fail, key: objectPrefix(s.prefix, q.Object), eps: map[string]endpoint.Endpoint{}}
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// watch follows one object; its goroutine alone touches its fields after Watch.
type watch struct {
	s    *Source
	q    naming.Query
	push func(naming.List)
	fail func(error) // nil: failures are only logged
	key  string
	eps  map[string]endpoint.Endpoint // key -> endpoint
}

// Backoff bounds between failed attempts to read or watch etcd.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// run reads and watches the object until ctx ends. A failure is reported to the watch (fail)
// every time, and logged once until it changes: a warning for the first of a kind, an info line
// when a read answers again, so that an etcd down for an hour is not a warning per servant
// every two seconds.
func (w *watch) run(ctx context.Context) {
	backoff := minBackoff
	read := firstReadTimeout // until a read answers: an unreachable etcd is reported early
	problem := ""            // the failure last logged; "" after a read answered
	failures := 0
	answered := func() {
		backoff, read = minBackoff, readTimeout
		if problem != "" {
			w.s.log.Info("etcd naming: reading again", zap.String("servant", w.q.Object), zap.Int("consecutive", failures))
			problem, failures = "", 0
		}
	}
	for ctx.Err() == nil {
		err := w.once(ctx, read, answered)
		if ctx.Err() != nil {
			return
		}
		failures++
		if err.Error() != problem {
			problem = err.Error()
			w.s.log.Warn("etcd naming: watch ended, reading again", zap.String("servant", w.q.Object), zap.Error(err), zap.Duration("retry_in", backoff))
		}
		if w.fail != nil {
			w.fail(err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// errCompacted ends a watch whose revision etcd has compacted away.
var errCompacted = errors.New("watch revision compacted")

// errRewound ends a watch whose etcd answers with a revision older than one already seen: etcd
// came back without its data (revisions start again from 1), and the etcd client resumed the
// watch from the old revision by itself, where the new keys, at lower revisions, never show.
var errRewound = errors.New("etcd revision went back (etcd restarted without its data)")

// errDiverged ends a watch whose keys are not those a read of etcd at the watch's revision
// returns: etcd came back without its data, already past the revision the watch had reached, and
// the watch resumed there sees nothing of what was written before.
var errDiverged = errors.New("etcd keys differ from the watch's (etcd restarted without its data)")

// progressEvery is how often a watch reads the object's keys, so that a rewound or rebuilt etcd
// is noticed though no event comes.
const progressEvery = 5 * time.Second

// Bounds of a read of the object's keys: the first ones (until one answers), so that a caller
// waiting for the first list with the default 3 s timeout learns that etcd is unreachable, and
// those after.
const (
	firstReadTimeout = time.Second
	readTimeout      = 5 * time.Second
)

// once reads the object's keys (bounded by read), pushes the list, then applies watch events
// until the watch fails; ok is called once the read has succeeded.
func (w *watch) once(ctx context.Context, read time.Duration, ok func()) error {
	rctx, rcancel := context.WithTimeout(ctx, read)
	resp, err := w.s.cli.Get(rctx, w.key, clientv3.WithPrefix())
	rcancel()
	if err != nil {
		return err
	}
	ok()
	clear(w.eps)
	for _, kv := range resp.Kvs {
		w.put(string(kv.Key), kv.Value)
	}
	w.emit()

	// The watch needs a leader, so that a member cut off from its cluster does not leave it
	// waiting for events that never come.
	wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer wcancel()
	rev := resp.Header.Revision // the newest revision etcd has shown: it never goes back
	ch := w.s.cli.Watch(wctx, w.key, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	var (
		timer   *time.Timer
		fire    <-chan time.Time
		pending bool
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-progress.C:
			// A read of the object's keys: a watch the client resumed on an etcd rebuilt
			// without its data gets no event for them and may get no progress notification
			// (its stream may still be in reconnect backoff). A read at a revision older than
			// one seen says so; a read at the revision the watch has reached whose keys are not
			// the watch's says so too (etcd came back already past the old revision, with other
			// keys). A read at a newer revision cannot be compared: the watch is asked for its
			// progress, which the next round compares.
			cctx, ccancel := context.WithTimeout(ctx, readTimeout)
			r, err := w.s.cli.Get(cctx, w.key, clientv3.WithPrefix())
			ccancel()
			switch {
			case err != nil:
			case r.Header.Revision < rev:
				return errRewound
			case r.Header.Revision == rev:
				if !w.holds(r.Kvs) {
					return errDiverged
				}
			default:
				_ = w.s.cli.RequestProgress(wctx)
			}
		case <-fire:
			fire, pending = nil, false
			w.emit()
		case wr, open := <-ch:
			if !open {
				if pending {
					w.emit()
				}
				return errors.New("watch channel closed")
			}
			if wr.CompactRevision != 0 {
				return errCompacted
			}
			if r := wr.Header.Revision; r != 0 && r < rev {
				return errRewound
			} else if r > rev {
				rev = r
			}
			if err := wr.Err(); err != nil {
				if pending {
					w.emit()
				}
				return err
			}
			changed := false
			for _, ev := range wr.Events {
				k := string(ev.Kv.Key)
				switch ev.Type {
				case clientv3.EventTypePut:
					changed = w.put(k, ev.Kv.Value) || changed
				case clientv3.EventTypeDelete:
					if _, had := w.eps[k]; had {
						delete(w.eps, k)
						changed = true
					}
				}
			}
			if !changed {
				continue
			}
			if w.s.debounce == 0 {
				w.emit()
				continue
			}
			if !pending {
				pending = true
				if timer == nil {
					timer = time.NewTimer(w.s.debounce)
				} else {
					timer.Reset(w.s.debounce)
				}
				fire = timer.C
			}
		}
	}
}

// put records the endpoint of one key, and reports whether the list changed.
func (w *watch) put(key string, value []byte) bool {
	ep, err := endpoint.ParseEndpoint(string(value))
	if err != nil || strings.Contains(key[len(w.key):], "/") {
		w.s.log.Warn("etcd naming: key skipped", zap.String("key", key), zap.ByteString("value", value), zap.Error(err))
		_, had := w.eps[key]
		delete(w.eps, key)
		return had
	}
	old, had := w.eps[key]
	w.eps[key] = ep
	return !had || old != ep
}

// holds reports whether the watch's endpoints are those of kvs (a read of the object's keys).
func (w *watch) holds(kvs []*mvccpb.KeyValue) bool {
	n := 0
	for _, kv := range kvs {
		k := string(kv.Key)
		ep, err := endpoint.ParseEndpoint(string(kv.Value))
		if err != nil || strings.Contains(k[len(w.key):], "/") {
			continue // put skips it too
		}
		if have, ok := w.eps[k]; !ok || have != ep {
			return false
		}
		n++
	}
	return n == len(w.eps)
}

// emit pushes the current list.
func (w *watch) emit() {
	keys := make([]string, 0, len(w.eps))
	for k := range w.eps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	all := make([]endpoint.Endpoint, len(keys))
	for i, k := range keys {
		all[i] = w.eps[k]
	}
	w.push(naming.List{Active: naming.SelectSet(all, w.q.Set)})
}
