package naming

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Target is a naming address, "scheme://rest": the Communicator's "naming" key, e.g.
// "etcd://127.0.0.1:2379/tars" or "dns://greeter.default.svc.cluster.local:9000".
type Target struct {
	Scheme string // before "://", lower case: "tars", "file", "etcd", "dns", ...
	// Rest is everything after "://", untouched: each scheme reads it in its own way (a URL's
	// host, path and query for etcd and dns, a proxy string for tars, a path for file).
	Rest string
}

// String returns "scheme://rest".
func (t Target) String() string { return t.Scheme + "://" + t.Rest }

// ParseTarget splits s at its "://". The scheme must be letters, digits, '+', '-' or '.',
// starting with a letter (as a URL scheme); it is returned in lower case.
func ParseTarget(s string) (Target, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return Target{}, fmt.Errorf(`naming: %q is not a naming address "scheme://...", e.g. "etcd://127.0.0.1:2379/tars"`, s)
	}
	for i, r := range scheme {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return Target{}, fmt.Errorf("naming: %q: scheme %q is not a URL scheme", s, scheme)
		}
	}
	return Target{Scheme: strings.ToLower(scheme), Rest: rest}, nil
}

// Env is what the Communicator gives a Builder.
type Env struct {
	// Log is the Communicator's logger (never nil when the Communicator builds).
	Log *zap.Logger
	// Refresh is the configuration's refresh-endpoint-interval: how often a registry source
	// asks again (0: the source's default). Sources of other kinds may ignore it (dns:// polls
	// at its own ?interval=): say so in their docs.
	Refresh time.Duration
	// EndpointCache is the configuration's endpoint-cache file ("" for none).
	EndpointCache string
	// StringToProxy is the Communicator's: it binds a proxy (a *servantproxy.ServantProxy or a
	// generated proxy) to a proxy string, for a source that is itself a TARS servant (the
	// registry's QueryF).
	StringToProxy func(proxy string, prx any) error
}

// Builder makes the Source of a target of its scheme. If the Source it returns implements
// io.Closer, its owner (the Communicator) closes it after stopping every watch on it.
type Builder func(t Target, env Env) (Source, error)

var (
	schemesMu sync.RWMutex
	schemes   = map[string]Builder{}
)

// hints names, for a well-known scheme that lives outside the tarscomm module, what to import.
var hints = map[string]string{
	"etcd": `the etcd scheme lives in the module github.com/tarscomm/tarscomm/etcd, so that tarscomm does not depend on an etcd client: import it (import _ "github.com/tarscomm/tarscomm/etcd")`,
}

// Register makes b the Builder of scheme (case-insensitive), replacing any before it. Sources
// register themselves in an init function, as database/sql drivers and gRPC resolvers do: the
// core ones (tars in naming/registry, file in naming/file, dns and dns+srv in naming/dns) are
// imported by the Communicator, so they are always there; etcd registers when its module
// github.com/tarscomm/tarscomm/etcd is imported. Register panics on an empty scheme or a nil b.
func Register(scheme string, b Builder) {
	if scheme == "" || b == nil {
		panic("naming: Register with an empty scheme or a nil Builder")
	}
	schemesMu.Lock()
	schemes[strings.ToLower(scheme)] = b
	schemesMu.Unlock()
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	schemesMu.RLock()
	defer schemesMu.RUnlock()
	out := make([]string, 0, len(schemes))
	for s := range schemes {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// ErrUnknownScheme matches the error of Build for a scheme nobody registered.
var ErrUnknownScheme = errors.New("naming: unknown scheme")

// Build parses target ("scheme://...") and makes its Source with the Builder of its scheme. An
// unknown scheme is an error matching ErrUnknownScheme that names the registered schemes.
func Build(target string, env Env) (Source, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	schemesMu.RLock()
	b := schemes[t.Scheme]
	schemesMu.RUnlock()
	if b == nil {
		msg := fmt.Sprintf("%v %q in %q (registered: %s)", ErrUnknownScheme, t.Scheme, target, strings.Join(Schemes(), ", "))
		if h := hints[t.Scheme]; h != "" {
			msg += "; " + h
		}
		return nil, &schemeError{msg: msg}
	}
	if env.Log == nil {
		env.Log = zap.NewNop()
	}
	src, err := b(t, env)
	if err != nil {
		return nil, fmt.Errorf("naming %q: %w", target, err)
	}
	return src, nil
}

type schemeError struct{ msg string }

func (e *schemeError) Error() string        { return e.msg }
func (e *schemeError) Is(target error) bool { return target == ErrUnknownScheme }

// Close closes src if it implements io.Closer.
func Close(src Source) error {
	if c, ok := src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
