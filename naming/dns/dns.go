package dns

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// Defaults of Options.
const (
	DefaultInterval = 10 * time.Second
	DefaultTimeout  = 5 * time.Second
	minInterval     = 10 * time.Millisecond
)

// Options configure a Source.
type Options struct {
	Interval time.Duration // between resolutions; DefaultInterval if 0, at least 10ms
	Timeout  time.Duration // of one resolution; DefaultTimeout if 0
	// Resolver is the DNS server to ask, "host:port"; "" for the system's.
	Resolver string
	Log      *zap.Logger // nil: none
}

// Source is a naming.Source and naming.Reporter over DNS. Its methods are safe for concurrent
// use; it holds no resource of its own between watches.
type Source struct {
	name string // host (A/AAAA) or SRV name, maybe with placeholders
	port int    // for A/AAAA; 0 with srv
	srv  bool
	o    Options
	r    *net.Resolver
}

// New returns the Source of "host:port": the A and AAAA records of host, on port.
func New(hostport string, o Options) (*Source, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, fmt.Errorf(`dns: %q is not "host:port": %w`, hostport, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("dns: %q: bad port %q", hostport, p)
	}
	return newSource(host, port, false, o)
}

// NewSRV returns the Source of an SRV name, e.g. "_tars._tcp.greeter.default.svc.cluster.local".
func NewSRV(name string, o Options) (*Source, error) {
	return newSource(name, 0, true, o)
}

func newSource(name string, port int, srv bool, o Options) (*Source, error) {
	if name == "" {
		return nil, errors.New("dns: empty name")
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Interval < minInterval {
		return nil, fmt.Errorf("dns: interval %v is below %v", o.Interval, minInterval)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	// StrictErrors: a question of the two (A and AAAA) that fails (SERVFAIL, a timeout) fails
	// the resolution, which keeps the last list; without it Go's resolver returns the half that
	// was answered as the whole, and the endpoints of the other family would leave the list.
	s := &Source{name: name, port: port, srv: srv, o: o, r: &net.Resolver{StrictErrors: true}}
	if o.Resolver != "" {
		if _, _, err := net.SplitHostPort(o.Resolver); err != nil {
			return nil, fmt.Errorf(`dns: resolver %q is not "host:port": %w`, o.Resolver, err)
		}
		addr := o.Resolver
		timeout := o.Timeout
		s.r = &net.Resolver{PreferGo: true, StrictErrors: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return clampDeadline(c, time.Now().Add(timeout)), nil
		}}
	}
	return s, nil
}

// The schemes, registered for the Communicator's naming key.
func init() {
	naming.Register("dns", func(t naming.Target, env naming.Env) (naming.Source, error) {
		name, o, err := parseRest(t.Rest, env)
		if err != nil {
			return nil, err
		}
		return New(name, o)
	})
	naming.Register("dns+srv", func(t naming.Target, env naming.Env) (naming.Source, error) {
		name, o, err := parseRest(t.Rest, env)
		if err != nil {
			return nil, err
		}
		return NewSRV(name, o)
	})
}

// parseRest reads "name?interval=..&timeout=..&resolver=..".
func parseRest(rest string, env naming.Env) (string, Options, error) {
	o := Options{Log: env.Log}
	name, query, _ := strings.Cut(rest, "?")
	if strings.Contains(name, "/") {
		return "", o, fmt.Errorf(`%q: a name has no '/' (options go in the query: "?resolver=host:port")`, name)
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return "", o, err
	}
	for k, v := range vals {
		val := v[len(v)-1]
		switch k {
		case "interval", "timeout":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return "", o, fmt.Errorf("%s=%q: not a positive duration", k, val)
			}
			if k == "interval" {
				o.Interval = d
			} else {
				o.Timeout = d
			}
		case "resolver":
			o.Resolver = val
		default:
			return "", o, fmt.Errorf("unknown option %q (known: interval, timeout, resolver)", k)
		}
	}
	return name, o, nil
}

// nameOf returns the name to resolve for object: s.name with its placeholders filled.
func (s *Source) nameOf(object string) (string, error) {
	if !strings.Contains(s.name, "{") {
		return s.name, nil
	}
	parts := strings.Split(strings.ToLower(object), ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("dns: %q has placeholders but object %q is not App.Server.Servant", s.name, object)
	}
	name := strings.NewReplacer("{app}", parts[0], "{server}", parts[1], "{servant}", parts[2]).Replace(s.name)
	if strings.ContainsAny(name, "{}") {
		return "", fmt.Errorf("dns: %q: unknown placeholder (known: {app}, {server}, {servant})", s.name)
	}
	return name, nil
}

// Watch implements naming.Source.
func (s *Source) Watch(q naming.Query, push func(naming.List)) (stop func()) {
	return s.WatchReporting(q, push, nil)
}

// WatchReporting implements naming.Reporter: it resolves q's name now and every interval, on a
// goroutine of its own, pushing each list that differs from the last and telling fail (if not
// nil) each failure.
func (s *Source) WatchReporting(q naming.Query, push func(naming.List), fail func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.follow(ctx, q, push, fail) })
	return func() {
		cancel()
		wg.Wait()
	}
}

func (s *Source) follow(ctx context.Context, q naming.Query, push func(naming.List), fail func(error)) {
	name, err := s.nameOf(q.Object)
	if err != nil {
		s.o.Log.Warn("dns naming: cannot resolve", zap.String("servant", q.Object), zap.Error(err))
		if fail != nil {
			fail(err)
		}
		<-ctx.Done()
		return
	}
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	var (
		last     naming.List
		have     bool
		problem  string // the last failure logged; "" after a success
		failures int
		skips    string // the SRV targets skipped last logged
	)
	for {
		rctx, rcancel := context.WithTimeout(ctx, s.o.Timeout)
		eps, skipped, err := s.resolve(rctx, name)
		rcancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			failures++
			var de *net.DNSError
			if s.o.Resolver != "" && errors.As(err, &de) {
				de.Server = s.o.Resolver // Go names the system's server even when Dial went elsewhere
			}
			err = fmt.Errorf("dns %s: %w", name, err)
			if k := failureKey(err); k != problem {
				problem = k
				s.o.Log.Warn("dns naming: resolution failed, keeping the last list", zap.String("servant", q.Object),
					zap.String("host", name), zap.Error(err))
			}
			if fail != nil {
				fail(err)
			}
		default:
			k := "" // the SRV targets skipped are logged once until they change
			if skipped != nil {
				if k = failureKey(skipped); k != skips {
					s.o.Log.Warn("dns naming: SRV targets skipped", zap.String("servant", q.Object), zap.String("host", name), zap.Error(skipped))
				}
			}
			skips = k
			if problem != "" {
				s.o.Log.Info("dns naming: resolving again", zap.String("servant", q.Object), zap.String("host", name), zap.Int("consecutive", failures))
				problem, failures = "", 0
			}
			l := naming.List{Active: naming.SelectSet(eps, q.Set)}
			if !have || !l.Equal(last) {
				last, have = l, true
				push(l)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// localAddr matches a socket's local address in an error's text ("read udp 127.0.0.1:37080->"),
// a new port for each question.
var localAddr = regexp.MustCompile(`\S+:\d+->`)

// failureKey is what tells one failure from another for the log: the error's text without the
// local addresses of the sockets it names, so that a resolver that refuses every question is
// logged once, not once per question's port.
func failureKey(err error) string { return localAddr.ReplaceAllString(err.Error(), "->") }

// resolve returns the endpoints name resolves to now, sorted, and what was skipped: the SRV
// targets that have no address (nil when none).
func (s *Source) resolve(ctx context.Context, name string) (eps []endpoint.Endpoint, skipped, err error) {
	var out []endpoint.Endpoint
	if !s.srv {
		addrs, err := s.r.LookupNetIP(ctx, "ip", name)
		if err != nil {
			return nil, nil, err
		}
		for _, a := range addrs {
			out = append(out, ep(a, s.port))
		}
	} else {
		_, recs, err := s.r.LookupSRV(ctx, "", "", name)
		if err != nil {
			return nil, nil, err
		}
		if len(recs) == 0 {
			return nil, nil, errors.New("no SRV record")
		}
		best := slices.MinFunc(recs, func(a, b *net.SRV) int { return cmp.Compare(a.Priority, b.Priority) }).Priority
		var errs []error
		for _, r := range recs {
			if r.Priority != best {
				continue
			}
			addrs, err := s.r.LookupNetIP(ctx, "ip", r.Target)
			if err != nil {
				if !isNotFound(err) {
					// A target that did not answer (a timeout, a server failure) may
					// still serve: dropping it from the list would take a healthy
					// endpoint out. The resolution fails and the last list stays.
					return nil, nil, fmt.Errorf("SRV target %s: %w", r.Target, err)
				}
				errs = append(errs, err) // it has no address: skipped
				continue
			}
			for _, a := range addrs {
				out = append(out, ep(a, int(r.Port)))
			}
		}
		if len(out) == 0 {
			return nil, nil, fmt.Errorf("no SRV target resolves: %w", errors.Join(errs...))
		}
		skipped = errors.Join(errs...) // logged by the watch once until it changes
	}
	slices.SortFunc(out, func(a, b endpoint.Endpoint) int {
		return cmp.Or(netip.MustParseAddr(a.Host).Compare(netip.MustParseAddr(b.Host)), cmp.Compare(a.Port, b.Port))
	})
	return slices.Compact(out), skipped, nil
}

// clampDeadline returns c with its deadlines never later than end. Go's resolver runs a lookup
// on a goroutine of its own that outlives the caller's ctx (lookups are shared) and waits for an
// unanswered question as long as resolv.conf says (5 s a try by default): a Source's lookup ends
// with the resolution's own Timeout instead, and leaves no goroutine behind for longer.
func clampDeadline(c net.Conn, end time.Time) net.Conn {
	_ = c.SetDeadline(end)
	switch c := c.(type) {
	case *net.UDPConn: // still a net.PacketConn, as the resolver expects of udp
		return &clampedUDP{UDPConn: c, end: end}
	case *net.TCPConn:
		return &clampedTCP{TCPConn: c, end: end}
	}
	return c
}

type clampedUDP struct {
	*net.UDPConn
	end time.Time
}

func (c *clampedUDP) SetDeadline(t time.Time) error { return c.UDPConn.SetDeadline(clamp(t, c.end)) }
func (c *clampedUDP) SetReadDeadline(t time.Time) error {
	return c.UDPConn.SetReadDeadline(clamp(t, c.end))
}
func (c *clampedUDP) SetWriteDeadline(t time.Time) error {
	return c.UDPConn.SetWriteDeadline(clamp(t, c.end))
}

type clampedTCP struct {
	*net.TCPConn
	end time.Time
}

func (c *clampedTCP) SetDeadline(t time.Time) error { return c.TCPConn.SetDeadline(clamp(t, c.end)) }
func (c *clampedTCP) SetReadDeadline(t time.Time) error {
	return c.TCPConn.SetReadDeadline(clamp(t, c.end))
}
func (c *clampedTCP) SetWriteDeadline(t time.Time) error {
	return c.TCPConn.SetWriteDeadline(clamp(t, c.end))
}

// clamp returns the earlier of t and end (a zero t, no deadline, is end).
func clamp(t, end time.Time) time.Time {
	if t.IsZero() || t.After(end) {
		return end
	}
	return t
}

// isNotFound reports whether err says a name has no address (NXDOMAIN, or no record of the
// kind asked), as opposed to a lookup that did not get an answer.
func isNotFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

func ep(a netip.Addr, port int) endpoint.Endpoint {
	return endpoint.Endpoint{Proto: endpoint.TCP, Host: a.Unmap().String(), Port: port, Weight: -1}
}
