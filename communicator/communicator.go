package communicator

import (
	"crypto/tls"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/asyncproc"
	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/lograte"
	"github.com/tarscomm/tarscomm/logging"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// The errors a call can end with, re-exported for callers that import only this package.
var (
	ErrTimeout    = call.ErrTimeout
	ErrQueueFull  = call.ErrQueueFull
	ErrNoEndpoint = call.ErrNoEndpoint
	ErrClosed     = call.ErrClosed
	ErrConnection = call.ErrConnection
	ErrOverload   = call.ErrOverload
	// ErrRequestTooLarge matches a call whose request frame is larger than max-packet-size: it
	// was not sent.
	ErrRequestTooLarge = call.ErrRequestTooLarge
	// ErrEncode matches a call whose request could not be encoded (a protobuf message that does
	// not marshal): it was not sent.
	ErrEncode = call.ErrEncode
	// ErrDecode matches a call whose reply (return code 0) could not be decoded into its reply
	// type, or was larger than max-packet-size: the server ran the call.
	ErrDecode = call.ErrDecode
	// ErrDatagramTooLarge matches a call to a udp endpoint whose request is larger than one
	// datagram carries (65507 bytes): it was not sent.
	ErrDatagramTooLarge = adapterproxy.ErrDatagramTooLarge
	// ErrTLS matches a TLS failure of an ssl endpoint (also ErrConnection).
	ErrTLS = tlsconn.ErrTLS
	// ErrAuth matches a refused TARS authentication of a -e 1 endpoint (also ErrConnection).
	ErrAuth = auth.ErrAuth
	// ErrNaming matches a call whose deadline passed while its servant waited for its first
	// endpoint list from the locator (or naming file, or WithNaming source): the error wraps the
	// source's last failure (a *naming.Error; errors.As finds the registry's own error in it),
	// and matches ErrTimeout too.
	ErrNaming = naming.ErrNaming
	// ErrInvalidTimeout is WithTimeout(0) or a negative timeout: the call was not sent.
	ErrInvalidTimeout = servantproxy.ErrInvalidTimeout
)

// ServerError is a reply with a non-zero TARS return code; match it with errors.As.
type ServerError = call.ServerError

// CallError says where a call without a reply failed (servant, function, endpoint, time spent)
// and wraps the sentinel above that says why; match it with errors.As.
type CallError = call.CallError

// ConnError carries the endpoint and cause of a connection failure; it matches ErrConnection.
type ConnError = call.ConnError

// Communicator owns net threads, async workers and servant proxies. Its methods are safe for
// concurrent use. Make it with New: a Communicator that New did not make (its zero value) makes
// no proxy (errNotMade) and its Close does nothing.
type Communicator struct {
	// Immutable after New.
	cfg     conf.Config
	log     *zap.Logger
	threads []*netthread.Thread
	async   *asyncproc.Pool
	shared  *stats.Shared      // calls that fail before a net thread takes them; nil without stats
	icpt    interceptor.Client // wraps every call; nil: none

	reports     reporters // TARS stat and property reporting, when configured
	reportsOnce sync.Once
	namingOnce  sync.Once // closeNaming: a concurrent Close waits for the first's

	naming    naming.Source // resolves proxy strings without '@'; nil: they have no endpoints
	ownNaming func()        // closes a source the Communicator made from its config
	// namingWhere names the naming source in errors: the key and address that configured it, or
	// WithNaming.
	namingWhere string

	mu       sync.Mutex
	proxies  map[string]servantproxy.ServantProxy // by identity (see Proxy), handed out as copies; guarded by mu
	internal map[string]bool                      // servants of internal proxies (report.go); guarded by mu
	limits   map[string]*servantproxy.Limit       // max-inflight by servant (limitOf); guarded by mu
	managers []*naming.Manager                    // guarded by mu
	closed   bool                                 // guarded by mu

	statsMu sync.Mutex // one Stats at a time: its snapshot and what it forgets (forget.go)
	forget  forgetting // guarded by statsMu, but for its timer
}

// New validates cfg and starts a Communicator: cfg.NetThread net threads and cfg.AsyncThread
// async workers. It keeps a copy of cfg (conf.Config.Clone): changing cfg or its servant table
// afterwards changes nothing the Communicator runs with (Config returns a copy too).
func New(cfg conf.Config, opts ...Option) (*Communicator, error) {
	cfg = cfg.Clone() // what is validated is what runs: the caller's maps stay the caller's
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		if opt != nil { // an option chosen at run time and left unset
			opt(&o)
		}
	}
	if o.log == nil {
		o.log = logging.Default(cfg.LogLevel)
	}
	c := &Communicator{cfg: cfg, log: o.log, proxies: make(map[string]servantproxy.ServantProxy), internal: map[string]bool{},
		limits: map[string]*servantproxy.Limit{}}
	if !o.noStats {
		c.shared = new(stats.Shared)
	}
	c.icpt = interceptor.ChainClient(o.icpt...)
	tlsConfigs, err := clientTLS(&cfg)
	if err != nil {
		return nil, err
	}
	warnings := new(lograte.Limiter) // an endpoint's warnings, one a second over every thread
	retention := o.retention         // of the counts of an endpoint that left (forget.go)
	if retention == 0 {
		retention = defaultRetention(cfg.ReportInterval)
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
			StatsRetention: retention,
			TLS:            tlsConfigs,
			Auth:           clientAuth(&cfg),
			Log:            o.log,
			Warnings:       warnings,
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
	if err := c.startNaming(o.naming); err != nil {
		_ = c.Close()
		return nil, err
	}
	if err := c.startReports(); err != nil {
		_ = c.Close()
		return nil, err
	}
	if !o.noStats {
		c.startForgetting(retention)
	}
	return c, nil
}

// clientTLS builds the TLS settings of ssl endpoints from cfg: the communicator's (key "") and
// each servant's that differ from it, each file read once, now.
func clientTLS(cfg *conf.Config) (map[string]*tls.Config, error) {
	out := make(map[string]*tls.Config)
	base, err := clientTLSConfig(cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("communicator: %w", err)
	}
	out[""] = base
	for name := range cfg.Servants {
		s := cfg.ForServant(name)
		if s.TLS == cfg.TLS {
			continue
		}
		tc, err := clientTLSConfig(s.TLS)
		if err != nil {
			return nil, fmt.Errorf("communicator: servant %s: %w", name, err)
		}
		out[name] = tc
	}
	return out, nil
}

// clientTLSConfig builds one tls.Config from t (validated by conf: its versions parse).
func clientTLSConfig(t conf.TLS) (*tls.Config, error) {
	minVersion, suites, err := t.Parse("")
	if err != nil {
		return nil, err
	}
	return tlsconn.ClientConfig(tlsconn.Files{CA: t.CA, Cert: t.Cert, Key: t.Key, ServerName: t.ServerName,
		MinVersion: minVersion, CipherSuites: suites})
}

// clientAuth returns the credentials for -e 1 endpoints from cfg: the communicator's (key "")
// and each servant's that differ from it.
func clientAuth(cfg *conf.Config) map[string]auth.Credentials {
	out := map[string]auth.Credentials{"": credentials(cfg.Auth)}
	for name := range cfg.Servants {
		if a := cfg.ForServant(name).Auth; a != cfg.Auth {
			out[name] = credentials(a)
		}
	}
	return out
}

// credentials are the auth package's form of a.
func credentials(a conf.Auth) auth.Credentials {
	return auth.Credentials{AccessKey: a.AccessKey, SecretKey: string(a.SecretKey)}
}

// Config returns the configuration the Communicator runs with: a copy, which changes nothing
// of it when changed (the configuration is fixed by New).
func (c *Communicator) Config() conf.Config { return c.cfg.Clone() }

// StringToProxy binds prx to the servant named by proxy, a TARS proxy string
// ("Obj@tcp -h host -p port:tcp -h ..."), or a bare "Obj" whose endpoints the naming source finds
// (the naming, locator or naming-file key, or WithNaming). prx is a *servantproxy.ServantProxy or
// a generated proxy (anything implementing servantproxy.Setter). As in TarsCpp, proxies are keyed by the whole
// proxy string (and the set): the same string always gets the same underlying proxy, another
// string for the same object (other endpoints, or a "#tag") gets a proxy of its own. A proxy,
// with its per-thread state and, for a bare "Obj", its watch of the naming source, lives as long
// as the Communicator: make proxies from a bounded set of strings (not one per request).
//
// As TarsCpp's stringToProxy throws, StringToProxy fails at once, binding nothing, when proxy
// does not parse, when it is a bare "Obj" and the Communicator has no naming source (no
// "naming", "locator", "naming-file" or WithNaming: the error names those keys and matches
// ErrNoEndpoint), and when prx is nil or a nil pointer.
func (c *Communicator) StringToProxy(proxy string, prx any) error {
	return c.bind(proxy, prx, false)
}

// errNotMade is the error of a Communicator that New did not make.
var errNotMade = errors.New("communicator: not made by New (the zero Communicator makes no proxy)")

// bind is StringToProxy; an internal proxy is one of the library's own (report.go).
func (c *Communicator) bind(proxy string, prx any, internal bool) error {
	switch p := prx.(type) {
	case nil:
		return errors.New("communicator: StringToProxy into nil: pass a pointer to a proxy, e.g. new(hellopb.GreeterProxy)")
	case *servantproxy.ServantProxy, servantproxy.Setter:
		if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
			return fmt.Errorf("communicator: StringToProxy into a nil %T: pass a pointer to a proxy value (&p, or new(...))", prx)
		}
	default:
		return fmt.Errorf("communicator: StringToProxy: %T is neither a *servantproxy.ServantProxy nor a servantproxy.Setter", prx)
	}
	sp, err := c.proxy(proxy, c.clientSet(), internal)
	if err != nil {
		return err
	}
	switch p := prx.(type) {
	case *servantproxy.ServantProxy:
		*p = *sp
	case servantproxy.Setter:
		p.SetServantProxy(sp)
	}
	return nil
}

// Proxy returns the ServantProxy for proxy, creating it on first use: each call returns a
// handle of its own to the same proxy (binding one with StringToProxy changes no other). With
// set routing on (enableset), a bare "Obj" is looked up in the client's set and its calls carry
// it. A bare "Obj" without a naming source (no naming, locator or naming-file key, no
// WithNaming) is refused, as by StringToProxy, with an error matching ErrNoEndpoint that names
// those keys.
func (c *Communicator) Proxy(proxy string) (*servantproxy.ServantProxy, error) {
	return c.proxy(proxy, c.clientSet(), false)
}

// clientSet is the set a bare "Obj" is looked up in: the client's, with set routing on.
func (c *Communicator) clientSet() string {
	if c.cfg.EnableSet {
		return c.cfg.SetDivision
	}
	return ""
}

// ProxyWithSet is Proxy for calls invoked by an explicit set, TarsCpp's stringToProxy(obj, set):
// a bare "Obj" is looked up with findObjectByIdInSameSet(obj, set), and every call carries the
// set (message type 0x80, status STATUS_SETNAME_VALUE), whether set routing is on or not. A
// proxy string with endpoints ("Obj@tcp ...") is invoked by no set, as in TarsCpp: set is
// ignored.
func (c *Communicator) ProxyWithSet(proxy, set string) (*servantproxy.ServantProxy, error) {
	if p := conf.SetDivisionProblem(set); p != "" {
		return nil, fmt.Errorf("communicator: set %q: %s", set, p)
	}
	return c.proxy(proxy, set, false)
}

// proxy builds or finds the ServantProxy of proxy in set. An internal proxy (report.go) runs no
// interceptor, is kept apart from the user's proxies of the same string, and its servant is left
// out of Stats.
func (c *Communicator) proxy(proxy, set string, internal bool) (*servantproxy.ServantProxy, error) {
	if c.async == nil {
		return nil, errNotMade
	}
	target, err := endpoint.Parse(proxy)
	if err != nil {
		return nil, fmt.Errorf("communicator: %w", err)
	}
	if len(target.Endpoints) == 0 && c.naming == nil {
		return nil, c.noNaming(target.Object)
	}
	for _, ep := range target.Endpoints {
		if p := ep.CallProblem(); p != "" {
			return nil, fmt.Errorf("communicator: %s: endpoint %q: %s", target.Object, ep.String(), p)
		}
	}
	direct := len(target.Endpoints) > 0
	if direct {
		set = "" // TarsCpp: a direct proxy is invoked by no set, the client's or one given
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	key := target.String() // TarsCpp keys proxies by the whole string; the tag is part of it
	if set != "" {
		key += " |set " + set
	}
	icpt := c.icpt
	if internal {
		key += " |internal"
		icpt = nil
		c.internal[target.Object] = true
	}
	if sp, ok := c.proxies[key]; ok {
		return &sp, nil // a handle of its own: rebinding it (StringToProxy into it) changes no other
	}
	s := c.cfg.ForServant(target.Object)
	push := servantproxy.NewPushSink()
	opts := objectproxy.Options{Balancer: s.LoadBalance, Retries: s.Retries, Guard: guardOf(s), Connections: s.Connections, Short: s.ShortConnections, Push: push}
	var m *naming.Manager
	objs := make([]*objectproxy.ObjectProxy, len(c.threads))
	switch {
	case direct: // (a bare object without naming was refused above)
	default:
		threads := c.threads
		// Lists are numbered as they come, and a thread installs only a list newer than its
		// own: gnet may run two tasks posted to a loop out of order (a task posted while 1024
		// wait goes to a second queue), which must not leave a thread on a stale list.
		var pushed atomic.Uint64
		installed := make([]uint64, len(threads)) // [i]: on thread i's loop only
		m = naming.NewManager(c.naming, naming.Query{Object: target.Object, Set: set}, func(l naming.List) {
			// Sorted, and what the pickers build from it built, once, off the loops.
			list := objectproxy.NewList(c.callable(target.Object, l.Active), c.callable(target.Object, l.Inactive))
			list.Prepare(opts.Balancer)
			n := pushed.Add(1)
			for i, t := range threads {
				o := objs[i]
				t.Execute(func() {
					if n > installed[i] {
						installed[i] = n
						o.Install(list)
					}
				})
			}
		})
		opts.Await, opts.Demand, opts.WaitReason = true, m.Start, m.Err
		opts.NoEndpoint = c.noEndpoint(target.Object, set)
	}
	for i, t := range c.threads {
		o, err := t.NewObjectProxy(target, opts)
		if err != nil {
			return nil, err
		}
		objs[i] = o
	}
	sp, err := servantproxy.New(target, objs, servantproxy.Options{
		Threads:      c.threads,
		Async:        c.async,
		SyncTimeout:  s.SyncInvokeTimeout,
		AsyncTimeout: s.AsyncInvokeTimeout,
		Stats:        c.shared,
		Interceptor:  icpt,
		Push:         push,
		SetName:      set,
		// Tail latency and overload (servantopts.go).
		Limit:         c.limitOf(target.Object, s.MaxInflight, internal),
		BackupRequest: s.BackupRequest,
		BackupRatio:   s.BackupBudget,
		Idempotent:    s.Idempotent,
	})
	if err != nil {
		return nil, err
	}
	if m != nil {
		c.managers = append(c.managers, m)
	}
	c.proxies[key] = *sp
	return sp, nil
}

// limitOf returns the max-inflight Limit of servant obj's proxies, made with max by the first:
// the servant's calls through every proxy string (a #tag, other endpoints, a set) count
// together, as max-inflight says. The Communicator's own proxies (internal) count apart.
// Called with c.mu held.
func (c *Communicator) limitOf(obj string, max int, internal bool) *servantproxy.Limit {
	if internal {
		return servantproxy.NewLimit(max)
	}
	l, ok := c.limits[obj]
	if !ok {
		l = servantproxy.NewLimit(max)
		c.limits[obj] = l
	}
	return l
}

// Close fails every call in flight with ErrClosed, runs the async callbacks that are due, and
// stops all net threads and workers, waiting for them. After Close returns no callback runs and
// no goroutine of the Communicator is left. Calling it again, or concurrently, returns when the
// Communicator is closed.
//
// Close may be called from an async callback: it then does the same except waiting for that
// callback (and for other callbacks blocked in Close), which is still running. When it returns,
// every other callback has run and none will; the worker running the calling callback exits
// once the callback returns. A callback that waits for something a Close in another callback
// holds (a sync.Once whose function calls Close, a mutex held around Close) waits for ever: that
// Close waits for it.
func (c *Communicator) Close() error {
	if c.async == nil {
		return nil // not made by New: nothing runs
	}
	c.mu.Lock()
	c.closed = true // Proxy refuses from now on
	c.mu.Unlock()
	c.stopForgetting()
	c.closeReports()
	c.closeNaming()
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
