package communicator

import (
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/asyncproc"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// The errors a call can end with, re-exported for callers that import only this package.
var (
	ErrTimeout    = call.ErrTimeout
	ErrQueueFull  = call.ErrQueueFull
	ErrNoEndpoint = call.ErrNoEndpoint
	ErrClosed     = call.ErrClosed
	ErrConnection = call.ErrConnection
)

// ServerError is a reply with a non-zero TARS return code; match it with errors.As.
type ServerError = call.ServerError

// CallError says where a call without a reply failed (servant, function, endpoint, time spent)
// and wraps the sentinel above that says why; match it with errors.As.
type CallError = call.CallError

// ConnError carries the endpoint and cause of a connection failure; it matches ErrConnection.
type ConnError = call.ConnError

// Option configures a Communicator at New.
type Option interface{ apply(*options) }

type options struct {
	log     *zap.Logger
	noStats bool
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithLogger makes the Communicator log through log (default: zap.NewNop()). Nothing is logged
// at Info level or above per request.
func WithLogger(log *zap.Logger) Option {
	return optionFunc(func(o *options) { o.log = log })
}

// Communicator owns net threads, async workers and servant proxies. Its methods are safe for
// concurrent use.
type Communicator struct {
	// Immutable after New.
	cfg     conf.Config
	log     *zap.Logger
	threads []*netthread.Thread
	async   *asyncproc.Pool
	shared  *stats.Shared // calls that fail before a net thread takes them; nil without stats

	mu      sync.Mutex
	proxies map[string]*servantproxy.ServantProxy // by object name; guarded by mu
	closed  bool                                  // guarded by mu
}

// New validates cfg and starts a Communicator: cfg.NetThread net threads and cfg.AsyncThread
// async workers.
func New(cfg conf.Config, opts ...Option) (*Communicator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := options{log: zap.NewNop()}
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	c := &Communicator{cfg: cfg, log: o.log, proxies: make(map[string]*servantproxy.ServantProxy)}
	if !o.noStats {
		c.shared = new(stats.Shared)
	}
	for i := range cfg.NetThread {
		t, err := netthread.New(netthread.Options{
			Index:          i,
			QueueCap:       cfg.QueueCap,
			CheckInterval:  cfg.TimeoutCheckInterval,
			ConnectTimeout: cfg.ConnectTimeout,
			MaxPacketSize:  cfg.MaxPacketSize,
			Health:         adapterproxy.Health(cfg.Health),
			KeepAlive:      cfg.KeepAliveInterval,
			SendBuffer:     cfg.SendBufferLimit,
			NoStats:        o.noStats,
			Log:            o.log,
		})
		if err != nil {
			for _, t := range c.threads {
				t.Close()
			}
			return nil, fmt.Errorf("communicator: start net thread %d: %w", i, err)
		}
		c.threads = append(c.threads, t)
	}
	c.async = asyncproc.New(asyncproc.Options{
		Workers:       cfg.AsyncThread,
		QueueCap:      cfg.AsyncQueueCap,
		InFlightLimit: cfg.AsyncInFlightLimit,
		Log:           o.log.Named("asyncproc"),
	})
	return c, nil
}

// Config returns the configuration the Communicator runs with.
func (c *Communicator) Config() conf.Config { return c.cfg }

// StringToProxy binds prx to the servant named by proxy, a TARS proxy string
// ("Obj@tcp -h host -p port:tcp -h ..."). prx is a *servantproxy.ServantProxy or a generated
// proxy (anything implementing servantproxy.Setter). The same object name always gets the same
// underlying proxy: the endpoints of the first call win, as in TARS; "Obj#tag@..." gets a proxy
// of its own per tag.
func (c *Communicator) StringToProxy(proxy string, prx any) error {
	sp, err := c.Proxy(proxy)
	if err != nil {
		return err
	}
	switch p := prx.(type) {
	case *servantproxy.ServantProxy:
		if p == nil {
			return errors.New("communicator: StringToProxy into a nil *ServantProxy")
		}
		*p = *sp
	case servantproxy.Setter:
		p.SetServantProxy(sp)
	default:
		return fmt.Errorf("communicator: StringToProxy: %T is neither a *servantproxy.ServantProxy nor a servantproxy.Setter", prx)
	}
	return nil
}

// Proxy returns the ServantProxy for proxy, creating it on first use.
func (c *Communicator) Proxy(proxy string) (*servantproxy.ServantProxy, error) {
	target, err := endpoint.Parse(proxy)
	if err != nil {
		return nil, err
	}
	for _, ep := range target.Endpoints {
		if ep.Proto != endpoint.TCP {
			return nil, fmt.Errorf("communicator: %s: endpoint %q: only tcp is supported for now", target.Object, ep.String())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	key := target.Object
	if target.Tag != "" {
		key += "#" + target.Tag // TARS: a tag gives the same servant a proxy of its own
	}
	if sp, ok := c.proxies[key]; ok {
		return sp, nil
	}
	s := c.cfg.ForServant(target.Object)
	sp, err := servantproxy.New(target, servantproxy.Options{
		Threads:      c.threads,
		Async:        c.async,
		SyncTimeout:  s.SyncInvokeTimeout,
		AsyncTimeout: s.AsyncInvokeTimeout,
		Balancer:     s.LoadBalance,
		Retries:      s.Retries,
		Stats:        c.shared,
	})
	if err != nil {
		return nil, err
	}
	c.proxies[key] = sp
	return sp, nil
}

// Close fails every call in flight with ErrClosed, runs the async callbacks that are due, and
// stops all net threads and workers, waiting for them. After Close returns no callback runs and
// no goroutine of the Communicator is left. Calling it again, or concurrently, returns when the
// Communicator is closed.
//
// Close may be called from an async callback: it then does the same except waiting for that
// callback (and for other callbacks blocked in Close), which is still running. When it returns,
// every other callback has run and none will; the worker running the calling callback exits
// once the callback returns.
func (c *Communicator) Close() error {
	c.mu.Lock()
	c.closed = true // Proxy refuses from now on
	c.mu.Unlock()
	// Each step is idempotent and waits for a close already under way, so a second Close does
	// not return before the first has finished.
	var wg sync.WaitGroup
	for _, t := range c.threads {
		wg.Go(t.Close)
	}
	wg.Wait()
	c.async.Close()
	return nil
}
