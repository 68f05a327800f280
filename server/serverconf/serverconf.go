package serverconf

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// Adapter is one [[server.adapter]]: the servant, where it listens, and its server.
type Adapter struct {
	Servant string
	// Endpoint is the adapter's endpoint; after Start its port is the one bound (port 0 in the
	// configuration picks a free one).
	Endpoint endpoint.Endpoint
	// Server serves the servant: register its handlers on it before Start (the generated
	// Register<Service> functions take it).
	Server *server.Server
}

// Servers are the servers one [server] table describes, one per adapter, in the file's order.
type Servers struct {
	mu       sync.Mutex // guards adapters' Endpoint and started
	adapters []Adapter
	started  bool // Start was called
}

// New builds the servers of c, starting none. opts apply to every adapter's server after the
// configuration's (say server.WithLogger, server.WithStats or server.WithInterceptor), so code
// overrides the file. It reads the TLS files now; errors name the key.
func New(c conf.Server, opts ...server.Option) (*Servers, error) {
	if err := validate(&c); err != nil {
		return nil, err
	}
	s := &Servers{}
	var errs []error
	ssl := false
	for i := range c.Adapters {
		ep, aopts, err := AdapterOptions(&c, i)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ssl = ssl || ep.Proto == endpoint.SSL
		s.adapters = append(s.adapters, Adapter{
			Servant:  c.Adapters[i].Servant,
			Endpoint: ep,
			Server:   server.New(append(aopts, opts...)...),
		})
	}
	if len(errs) == 0 && len(c.Adapters) > 0 && !ssl && c.ServerTLS != (conf.ServerTLS{}) {
		// Refused rather than ignored: with verifyclient = true its owner believes clients must
		// show a certificate, while every adapter serves plain tcp to anyone.
		errs = append(errs, errors.New(`serverconf: [server]'s TLS keys (cert, key, ca, verifyclient, tls-...) are set but no adapter's endpoint is ssl: they would do nothing; serve TLS with "ssl -h ... -p ..."`))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// validate checks what conf.Validate checks, for a conf.Server changed in code.
func validate(c *conf.Server) error {
	cfg := conf.Default()
	cfg.Server = *c
	return cfg.Validate()
}

// AdapterOptions returns the endpoint of adapter i of c and the server options it configures:
// event loops, packet size, handler goroutines and queue, TLS, authentication. It is what New
// uses for each adapter, for a program that builds its server.Server itself. c should have
// passed conf's validation (conf.Load does it).
func AdapterOptions(c *conf.Server, i int) (endpoint.Endpoint, []server.Option, error) {
	a := c.ForAdapter(i)
	key := "server.adapter[" + strconv.Itoa(i) + "]"
	ep, err := endpoint.ParseEndpoint(a.Endpoint)
	if err != nil {
		return ep, nil, fmt.Errorf("serverconf: %s.endpoint = %q: %w", key, a.Endpoint, err)
	}
	bad := func(problem string) error {
		return fmt.Errorf("serverconf: %s.endpoint = %q: %s", key, a.Endpoint, problem)
	}
	opts := []server.Option{
		server.WithNumEventLoop(c.NetThread),
		server.WithMaxPacketSize(c.MaxPacketSize),
		server.WithFrameBudget(orDefault(c.FrameBudget, server.DefaultFrameBudget)),
		server.WithWorkers(a.Threads),
		server.WithQueueCap(a.QueueCap),
	}
	opts = append(opts, limits(&a, ep)...)
	switch ep.Proto {
	case endpoint.UDP:
		if c.Adapters[i].ServerTLS != (conf.ServerTLS{}) {
			return ep, nil, bad("TLS keys are set on the adapter but its endpoint is udp, which has no TLS")
		}
		if ep.AuthType == endpoint.AuthLocal || a.AccessKey != "" {
			return ep, nil, bad("udp has no connections to authenticate: -e 1 and accesskey need tcp or ssl")
		}
		for _, k := range []struct {
			name string
			v    int
		}{{"maxconns", a.MaxConns}, {"backpacketlimit", a.BackPacketLimit}, {"backpacketmin", a.BackPacketMin}, {"maxbacklog", a.MaxBacklog}} {
			if k.v != 0 {
				return ep, nil, fmt.Errorf("serverconf: %s.%s = %d: limits a connection's clients or replies, and a udp endpoint has no connections", key, k.name, k.v)
			}
		}
	case endpoint.SSL:
		if a.Cert == "" || a.Key == "" {
			return ep, nil, bad("an ssl endpoint needs cert and key ([server] or the adapter)")
		}
		minVersion, suites, err := a.Parse(key + ".")
		if err != nil {
			return ep, nil, err
		}
		tc, err := tlsconn.ServerConfig(tlsconn.Files{CA: a.CA, Cert: a.Cert, Key: a.Key,
			MinVersion: minVersion, CipherSuites: suites}, a.VerifyClient)
		if err != nil {
			return ep, nil, fmt.Errorf("serverconf: %s: %w", key, err)
		}
		opts = append(opts, server.WithTLS(tc), server.WithHandshakeTimeout(c.HandshakeTimeout))
	default:
		if c.Adapters[i].ServerTLS != (conf.ServerTLS{}) {
			return ep, nil, bad("TLS keys are set on the adapter but its endpoint is tcp: serve TLS with \"ssl -h ... -p ...\"")
		}
	}
	switch {
	case ep.AuthType == endpoint.AuthLocal && a.AccessKey == "":
		return ep, nil, bad("-e 1 needs the adapter's accesskey and secretkey")
	case ep.AuthType != endpoint.AuthLocal && a.AccessKey != "":
		return ep, nil, bad("accesskey and secretkey are set but the endpoint has no -e 1: add it to require authentication")
	case ep.AuthType == endpoint.AuthLocal:
		opts = append(opts, server.WithAuth(keys(a.AccessKey, string(a.SecretKey))))
	}
	return ep, opts, nil
}

// The defaults of an adapter's limits (doc.go says why the first two are not TarsCpp's 128 and
// 3000 ms).
const (
	defaultMaxConns     = 0         // <maxconns>: no limit
	defaultIdleTimeout  = 60000     // an endpoint's -t when absent, in ms: what TARS deployments write
	defaultBackLimit    = 100 << 20 // <backpacketlimit>, TarsCpp's
	defaultBackMin      = 1024      // <backpacketmin>, TarsCpp's
	defaultQueueTimeout = 10000     // <queuetimeout>, ms, TarsCpp's
	minQueueTimeout     = 3000      // TarsCpp's MIN_QUEUE_TIMEOUT: a smaller <queuetimeout> is raised to it
)

// limits returns the options of a's connection limits: maxconns, the -t of its endpoint ep,
// backpacketlimit, backpacketmin, maxbacklog. 0 in a key means its default, -1 no limit.
// TarsCpp counts -t in whole seconds (a connection's timeout is the endpoint's -t / 1000, and 0
// is never), and so does this.
func limits(a *conf.Adapter, ep endpoint.Endpoint) []server.Option {
	idle := ep.Timeout
	if !slices.Contains(strings.Fields(a.Endpoint), "-t") { // -t 0 (never) and no -t both parse to 0
		idle = defaultIdleTimeout * time.Millisecond
	}
	backMin := a.BackPacketMin
	if backMin == 0 {
		backMin = defaultBackMin
	}
	return []server.Option{
		server.WithQueueTimeout(time.Duration(queueTimeout(a.QueueTimeout)) * time.Millisecond),
		server.WithMaxConns(orDefault(a.MaxConns, defaultMaxConns)),
		server.WithIdleTimeout(idle.Truncate(time.Second)),
		server.WithBacklog(orDefault(a.BackPacketLimit, defaultBackLimit), backMin),
		server.WithMaxBacklog(orDefault(a.MaxBacklog, server.DefaultMaxBacklog)),
	}
}

// queueTimeout is the queue timeout of <queuetimeout> v, in milliseconds: the default for 0, no
// limit for -1, and at least minQueueTimeout otherwise, as TarsCpp's BindAdapter::setQueueTimeout
// raises it.
func queueTimeout(v int) int {
	if v > 0 {
		return max(v, minQueueTimeout)
	}
	return orDefault(v, defaultQueueTimeout)
}

// orDefault returns the value of a limit key that is v: def for 0, the server's "no limit" (0)
// for -1.
func orDefault(v, def int) int {
	switch v {
	case 0:
		return def
	case -1:
		return 0
	}
	return v
}

// keys is the key lookup of one access key.
func keys(accessKey, secretKey string) func(string) (string, bool) {
	return func(ak string) (string, bool) {
		if subtle.ConstantTimeCompare([]byte(ak), []byte(accessKey)) != 1 {
			return "", false
		}
		return secretKey, true
	}
}

// Server returns the server of the adapter serving servant, or nil if none does (a generated
// Register, and server.Handle, given nil return an error naming the servant).
func (s *Servers) Server(servant string) *server.Server {
	for i := range s.adapters {
		if s.adapters[i].Servant == servant {
			return s.adapters[i].Server
		}
	}
	return nil
}

// Adapters returns the adapters, in the file's order; after Start their endpoints carry the
// ports bound.
func (s *Servers) Adapters() []Adapter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Adapter(nil), s.adapters...)
}

// Endpoint returns the endpoint of the adapter serving servant (after Start, with the port
// bound), and whether there is one: "Servant@" + ep.String() is a proxy string for it.
func (s *Servers) Endpoint(servant string) (endpoint.Endpoint, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.adapters {
		if a.Servant == servant {
			return a.Endpoint, true
		}
	}
	return endpoint.Endpoint{}, false
}

// startFailStop bounds the stopping of the servers already started when another fails to start.
const startFailStop = 5 * time.Second

// Start starts every adapter's server on its endpoint, in order. If one fails, the ones started
// are stopped and the error names the adapter. A Servers starts once: a second Start returns
// server.ErrStarted and changes nothing.
func (s *Servers) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("serverconf: Start called twice: %w", server.ErrStarted)
	}
	s.started = true
	for i := range s.adapters {
		a := &s.adapters[i]
		addr, err := a.Server.Start(listenAddr(a.Endpoint))
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), startFailStop)
			defer cancel()
			for j := range s.adapters {
				_ = s.adapters[j].Server.Stop(ctx) // the ones not started are only marked stopped
			}
			return fmt.Errorf("serverconf: adapter %s (%s): %w", a.Servant, a.Endpoint, err)
		}
		switch ba := addr.(type) {
		case *net.TCPAddr:
			a.Endpoint.Port = ba.Port
		case *net.UDPAddr:
			a.Endpoint.Port = ba.Port
		}
	}
	return nil
}

// listenAddr is the address server.Start serves ep on: "udp://host:port" for a udp endpoint.
func listenAddr(ep endpoint.Endpoint) string {
	if ep.Proto == endpoint.UDP {
		return "udp://" + ep.Addr()
	}
	return ep.Addr()
}

// Stop stops every server (server.Server.Stop: refuse new requests, finish those in flight,
// close the connections) within ctx, and returns their errors joined.
func (s *Servers) Stop(ctx context.Context) error {
	errs := make([]error, len(s.adapters))
	var wg sync.WaitGroup
	for i := range s.adapters {
		wg.Go(func() {
			if err := s.adapters[i].Server.Stop(ctx); err != nil {
				errs[i] = fmt.Errorf("serverconf: adapter %s: %w", s.adapters[i].Servant, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
