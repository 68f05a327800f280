package communicator

import (
	"log/slog"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/logging"
	"github.com/tarscomm/tarscomm/naming"
)

// Option configures a Communicator at New. Options set in code what has no place in the TOML
// configuration (a logger, a naming source, interceptors); docs/ARCHITECTURE.md states the rule.
type Option func(*options)

type options struct {
	log       *zap.Logger
	noStats   bool
	retention time.Duration
	naming    naming.Source
	icpt      []interceptor.Client
}

// WithLogger makes the Communicator log through log. Without it the Communicator logs JSON lines
// to standard error from the configuration's log-level up (warn by default: nothing until
// something is wrong; see package logging). Nothing is logged per request above Debug; warnings
// (a failed connect, a lost connection) are rate-limited per endpoint.
func WithLogger(log *zap.Logger) Option {
	return func(o *options) { o.log = log }
}

// WithSlog makes the Communicator log through l (nil: slog.Default()), whose handler decides
// what is logged; log-level is then not used. See logging.FromSlog.
func WithSlog(l *slog.Logger) Option {
	return func(o *options) { o.log = logging.FromSlog(l) }
}

// WithNaming makes src resolve proxy strings without '@' (in place of the naming, locator or
// naming-file key of the configuration): an etcd source, a file source built in code, or any naming.Source. The
// caller keeps ownership of src: the Communicator stops its watches at Close but does not close
// it.
func WithNaming(src naming.Source) Option {
	return func(o *options) { o.naming = src }
}

// WithoutStats turns call counting off: Stats then reports the net threads and endpoints but no
// calls. Counting costs a map lookup and a few increments per call, on the net thread, without
// locks or shared atomics; this option exists to measure that cost.
func WithoutStats() Option {
	return func(o *options) { o.noStats = true }
}

// WithStatsRetention sets how long Stats keeps the call counts of an endpoint that has left its
// servant's list (no net thread has a connection to it) after they last changed: then they are
// dropped, with their metric series and debug page rows, so that what the client holds follows
// the endpoints there are, not every address it called since it started (a rolling deploy gives
// each instance a new one). Keep it longer than any reader's interval (the stat report, a
// Prometheus scrape), or a reader misses the last counts of an endpoint. Default: ten minutes, or
// two report intervals if longer; at least 10ms.
func WithStatsRetention(d time.Duration) Option {
	return func(o *options) { o.retention = max(d, minRetention) }
}

// WithInterceptor adds client interceptors: each call of every proxy of the Communicator goes
// through them, the first given outermost (tracing and metrics: see the otel module); a nil one
// is skipped. Calls pay nothing for this when there is none.
func WithInterceptor(cs ...interceptor.Client) Option {
	return func(o *options) { o.icpt = append(o.icpt, cs...) }
}
