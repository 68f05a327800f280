package devregistry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/file"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/server"
)

// DefaultServant is the object name QueryF is served under, the TARS registry's.
const DefaultServant = "tars.tarsregistry.QueryObj"

// Options configures a Registry; every field is optional.
type Options struct {
	// File is a TOML file (its name ends in .toml) or a directory of naming files (see the
	// package documentation); "" serves only registrations.
	File string
	// Reload is how often File is read again; default 1s.
	Reload time.Duration
	// QueryAddr is where QueryF listens, "host:port"; default "127.0.0.1:0" (a free port).
	QueryAddr string
	// Servant is the object name of QueryF; default DefaultServant.
	Servant string
	// HTTPAddr is where the registration interface listens, "host:port"; "" for none.
	HTTPAddr string
	// Log receives reload problems and registrations; default none.
	Log *zap.Logger
}

// Registry is a running development registry. Start it with Start; Close stops it.
type Registry struct {
	opts Options
	log  *zap.Logger
	srv  *server.Server
	addr *net.TCPAddr
	http *http.Server
	hln  net.Listener

	mu         sync.Mutex
	static     map[string]naming.List             // from File
	groups     []group                            // from File, sorted by name
	regs       map[string]map[string]registration // object -> endpoint address -> registration
	last       []byte                             // File's content applied
	pending    []byte                             // a content read once, not applied yet
	hasPending bool                               // pending holds one (it may be empty: a truncated file)
	sweepAt    int                                // len(regs) at which Register purges every object
	now        func() time.Time                   // the clock; tests keep time.Now

	stop      chan struct{}
	reloaded  chan struct{} // closed when the reload goroutine exits
	closeOnce sync.Once
	closeErr  error
}

// group is one IDC group: the networks of its members.
type group struct {
	name string
	nets []*net.IPNet
}

// registration is one endpoint a server registered.
type registration struct {
	ep      endpoint.Endpoint
	at      time.Time // when it was (re)registered, to keep a stable order
	expires time.Time // zero: never
}

// Start reads opts.File, starts QueryF on opts.QueryAddr and the HTTP interface on
// opts.HTTPAddr, and follows the file's changes until Close.
func Start(opts Options) (*Registry, error) {
	if opts.Reload <= 0 {
		opts.Reload = time.Second
	}
	if opts.QueryAddr == "" {
		opts.QueryAddr = "127.0.0.1:0"
	}
	if opts.Servant == "" {
		opts.Servant = DefaultServant
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	r := &Registry{
		opts: opts, log: opts.Log.Named("devregistry"),
		regs: make(map[string]map[string]registration), now: time.Now,
		stop: make(chan struct{}), reloaded: make(chan struct{}),
	}
	if opts.File != "" {
		if err := r.load(false); err != nil {
			return nil, err
		}
	}
	r.srv = server.New(server.WithNumEventLoop(1), server.WithLogger(opts.Log))
	if err := queryf.RegisterQueryF(r.srv, opts.Servant, query{r: r}); err != nil {
		return nil, err
	}
	addr, err := r.srv.Start(opts.QueryAddr)
	if err != nil {
		return nil, fmt.Errorf("devregistry: %w", err)
	}
	r.addr, _ = addr.(*net.TCPAddr)
	if opts.HTTPAddr != "" {
		if r.hln, err = net.Listen("tcp", opts.HTTPAddr); err != nil {
			_ = r.srv.Stop(context.Background())
			return nil, fmt.Errorf("devregistry: http: %w", err)
		}
		r.http = &http.Server{Handler: r.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = r.http.Serve(r.hln) }()
	}
	if opts.File != "" {
		go r.follow()
	} else {
		close(r.reloaded)
	}
	return r, nil
}

// Locator returns the proxy string of QueryF, for a client's locator key:
// "tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p 17890".
func (r *Registry) Locator() string {
	ep := endpoint.Endpoint{Proto: endpoint.TCP, Host: r.addr.IP.String(), Port: r.addr.Port, Weight: -1}
	return r.opts.Servant + "@" + ep.String()
}

// HTTPURL returns the base URL of the registration interface ("http://127.0.0.1:17891"), or ""
// without one.
func (r *Registry) HTTPURL() string {
	if r.hln == nil {
		return ""
	}
	return "http://" + r.hln.Addr().String()
}

// Register adds ep to obj's active endpoints for ttl (ttl <= 0: until Deregister), replacing a
// registration of the same address. Registering again renews it.
func (r *Registry) Register(obj string, ep endpoint.Endpoint, ttl time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	reg := registration{ep: ep, at: now}
	if old, ok := r.regs[obj][key(ep)]; ok && !r.expired(old, now) {
		reg.at = old.at // a renewal keeps its place; one after the expiry is a new registration
	}
	if ttl > 0 {
		reg.expires = now.Add(ttl)
	}
	m := r.regs[obj]
	if m == nil {
		if len(r.regs) >= r.sweepAt { // names that expired and were never looked at again go
			for name := range r.regs {
				r.purge(name, now)
			}
			r.sweepAt = max(minSweep, 2*len(r.regs))
		}
		m = make(map[string]registration)
		r.regs[obj] = m
	}
	m[key(ep)] = reg
}

// minSweep is the number of registered objects at which Register first looks for expired ones;
// it looks again each time their number doubles since.
const minSweep = 256

// Deregister removes the registration of ep's address from obj, and reports whether there was
// one.
func (r *Registry) Deregister(obj string, ep endpoint.Endpoint) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	reg, ok := r.regs[obj][key(ep)]
	delete(r.regs[obj], key(ep))
	r.purge(obj, r.now())
	return ok && !r.expired(reg, r.now()) // one that expired was gone already
}

// purge drops obj's expired registrations, and obj's entry once it holds none: what the registry
// holds follows what is registered now, not every name ever registered (servers restarted on
// new ports all day, or names registered by anyone reaching the HTTP interface). Called with mu
// held.
func (r *Registry) purge(obj string, now time.Time) {
	m, ok := r.regs[obj]
	if !ok {
		return
	}
	for k, reg := range m {
		if r.expired(reg, now) {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		delete(r.regs, obj)
	}
}

// expired reports whether reg's ttl has passed at now.
func (r *Registry) expired(reg registration, now time.Time) bool {
	return !reg.expires.IsZero() && now.After(reg.expires)
}

// key identifies a registered endpoint: its protocol and address.
func key(ep endpoint.Endpoint) string { return ep.Proto.String() + " " + ep.Addr() }

// Lookup returns every endpoint of obj: the file's, then the registered ones (oldest
// registration first) as active. An address is listed once: a registration of an endpoint the
// file lists as active adds nothing, and one the file lists as inactive makes it active (its
// server says it is up), as TARS's registry keys an adapter by its address.
func (r *Registry) Lookup(obj string) naming.List {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookup(obj)
}

func (r *Registry) lookup(obj string) naming.List {
	st := r.static[obj]
	l := naming.List{Active: slices.Clone(st.Active), Inactive: slices.Clone(st.Inactive)}
	var regs []registration
	r.purge(obj, r.now())
	for _, reg := range r.regs[obj] {
		regs = append(regs, reg)
	}
	slices.SortFunc(regs, func(a, b registration) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(key(a.ep), key(b.ep))
	})
	listed := make(map[string]bool, len(l.Active))
	for _, ep := range l.Active {
		listed[key(ep)] = true
	}
	for _, reg := range regs {
		k := key(reg.ep)
		if listed[k] {
			continue
		}
		listed[k] = true
		l.Inactive = slices.DeleteFunc(l.Inactive, func(ep endpoint.Endpoint) bool { return key(ep) == k })
		l.Active = append(l.Active, reg.ep)
	}
	return l
}

// objects returns the names of every object served, sorted.
func (r *Registry) objects() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name := range r.static {
		names = append(names, name)
	}
	now := r.now()
	for name := range r.regs {
		r.purge(name, now) // deleting the entry being visited is safe in a range
		if len(r.regs[name]) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// groupOf returns the group whose networks hold host, or "".
func (r *Registry) groupOf(host string) string {
	ip := net.ParseIP(host)
	if ip == nil {
		return ""
	}
	for _, g := range r.groups {
		for _, n := range g.nets {
			if n.Contains(ip) {
				return g.name
			}
		}
	}
	return ""
}

// Close stops the HTTP interface, QueryF and the reloading, within ctx.
func (r *Registry) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		close(r.stop)
		var errs []error
		if r.http != nil {
			errs = append(errs, r.http.Shutdown(ctx))
		}
		errs = append(errs, r.srv.Stop(ctx))
		select {
		case <-r.reloaded:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
		r.closeErr = errors.Join(errs...)
	})
	return r.closeErr
}

// follow reads the file again every Reload until Close.
func (r *Registry) follow() {
	defer close(r.reloaded)
	t := time.NewTicker(r.opts.Reload)
	defer t.Stop()
	var lastErr string
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		if err := r.load(true); err != nil {
			if err.Error() != lastErr {
				r.log.Warn("reload failed; keeping the last good content", zap.Error(err))
			}
			lastErr = err.Error()
			continue
		}
		lastErr = ""
	}
}

// load reads File and applies it if it changed and parses. With settle, a new content is applied
// only once two reads in a row returned it, so that a file being written in place is not
// applied half-written (say "-p 40" of "-p 40123"); Start loads without it.
func (r *Registry) load(settle bool) error {
	data, static, groups, err := read(r.opts.File)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != nil && bytes.Equal(data, r.last) {
		r.pending, r.hasPending = nil, false // a half-written read that did not last
		return nil
	}
	if settle && (!r.hasPending || !bytes.Equal(data, r.pending)) {
		r.pending, r.hasPending = data, true // applied on the next read if it stays
		return nil
	}
	r.last, r.static, r.groups = data, static, groups
	r.pending, r.hasPending = nil, false
	return nil
}

// read reads and parses path: a TOML file or a directory of naming files. data is what was
// read, to tell a change.
func read(path string) (data []byte, static map[string]naming.List, groups []group, err error) {
	if strings.HasSuffix(path, ".toml") {
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("devregistry: %w", err)
		}
		static, groups, err = parseTOML(data)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("devregistry: %s: %w", path, err)
		}
		return data, static, groups, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("devregistry: %w (a .toml file or a directory of naming files)", err)
	}
	static = make(map[string]naming.List)
	for _, e := range entries { // sorted by name
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := filepath.Join(path, e.Name())
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("devregistry: %w", err)
		}
		lists, err := file.Parse(b)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("devregistry: %s: %w", name, err)
		}
		for obj, l := range lists {
			have := static[obj]
			have.Active = append(have.Active, l.Active...)
			have.Inactive = append(have.Inactive, l.Inactive...)
			static[obj] = have
		}
		data = append(append(append(data, name...), 0), b...)
	}
	return data, static, nil, nil
}

// fileTOML is the TOML format (package documentation).
type fileTOML struct {
	Objects  map[string][]string `toml:"objects"`
	Inactive map[string][]string `toml:"inactive"`
	Groups   map[string][]string `toml:"groups"`
}

func parseTOML(data []byte) (map[string]naming.List, []group, error) {
	var f fileTOML
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		if name, ok := unquotedName(data, err); ok {
			// The decoder's own words (a map where a list goes) do not say what to write.
			return nil, nil, fmt.Errorf("an object's name has dots, which TOML reads as nested tables: quote it, %q = [...] (%w)", name, err)
		}
		return nil, nil, err
	}
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, fmt.Errorf("unknown key %s (the tables are objects, inactive and groups)", k))
	}
	static := make(map[string]naming.List)
	parse := func(table string, m map[string][]string, inactive bool) {
		for obj, eps := range m {
			l := static[obj]
			for i, s := range eps {
				ep, err := endpoint.ParseEndpoint(s)
				if p := endpoint.SetDivisionProblem(ep.SetDivision); err == nil && ep.SetDivision != "" && p != "" {
					err = fmt.Errorf("set %q: %s", ep.SetDivision, p)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("%s.%q[%d]: %w", table, obj, i, err))
					continue
				}
				if inactive {
					l.Inactive = append(l.Inactive, ep)
				} else {
					l.Active = append(l.Active, ep)
				}
			}
			static[obj] = l
		}
	}
	parse("objects", f.Objects, false)
	parse("inactive", f.Inactive, true)
	var groups []group
	for name, cidrs := range f.Groups {
		g := group{name: name}
		for i, c := range cidrs {
			_, n, err := net.ParseCIDR(c)
			if err != nil {
				errs = append(errs, fmt.Errorf("groups.%s[%d] = %q: a network such as \"10.1.0.0/16\": %w", name, i, c, err))
				continue
			}
			g.nets = append(g.nets, n)
		}
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b group) int { return strings.Compare(a.name, b.name) })
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return static, groups, nil
}

// unquotedKey matches the decoder's error for a table where a list of endpoints goes, under one
// of the file's tables: the key's first part.
var unquotedKey = regexp.MustCompile(`\(last key "(objects|inactive|groups)\.([^".]+)"\): incompatible types: TOML value has type map`)

// unquotedName reports whether err, data's decoding error, comes from an object name written
// without quotes (Hello.GreeterServer.GreeterObj = [...], which TOML reads as nested tables), and
// returns the name as it was meant: the path of keys from the table down to the list.
func unquotedName(data []byte, err error) (string, bool) {
	m := unquotedKey.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	var raw map[string]any
	if _, derr := toml.Decode(string(data), &raw); derr != nil {
		return "", false
	}
	table, _ := raw[m[1]].(map[string]any)
	path := []string{m[2]}
	v := table[m[2]]
	for {
		sub, ok := v.(map[string]any)
		if !ok || len(sub) == 0 {
			break
		}
		k := slices.Sorted(maps.Keys(sub))[0]
		path, v = append(path, k), sub[k]
	}
	return strings.Join(path, "."), len(path) > 1
}
