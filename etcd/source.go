package etcd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

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
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{s: s, q: q, push: push, key: objectPrefix(s.prefix, q.Object), eps: map[string]endpoint.Endpoint{}}
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
	key  string
	eps  map[string]endpoint.Endpoint // key -> endpoint
}

// Backoff bounds between failed attempts to read or watch etcd.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

func (w *watch) run(ctx context.Context) {
	backoff := minBackoff
	for ctx.Err() == nil {
		err := w.once(ctx, func() { backoff = minBackoff })
		if ctx.Err() != nil {
			return
		}
		w.s.log.Warn("etcd naming: watch ended, reading again", zap.String("servant", w.q.Object), zap.Error(err), zap.Duration("retry_in", backoff))
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

// progressEvery is how often a watch reads etcd's current revision, so that a rewound etcd is
// noticed though no event comes.
const progressEvery = 5 * time.Second

// once reads the object's keys, pushes the list, then applies watch events until the watch
// fails; ok is called once the read has succeeded.
func (w *watch) once(ctx context.Context, ok func()) error {
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
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
			// etcd's current revision, from a read of nothing but a count: a watch the
			// client resumed on an etcd rebuilt without its data gets no event and no
			// progress notification (its stream may still be in reconnect backoff).
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			r, err := w.s.cli.Get(cctx, w.key, clientv3.WithPrefix(), clientv3.WithCountOnly())
			ccancel()
			if err == nil && r.Header.Revision < rev {
				return errRewound
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
