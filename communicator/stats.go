package communicator

import (
	"net/http"
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/debugpage"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/stats"
)

// WithoutStats turns call counting off: Stats then reports the net threads and endpoints but no
// calls. Counting costs a map lookup and a few increments per call, on the net thread, without
// locks or shared atomics; this option exists to measure that cost.
func WithoutStats() Option {
	return optionFunc(func(o *options) { o.noStats = true })
}

// WithInterceptor adds client interceptors: each call of every proxy of the Communicator goes
// through them, the first given outermost (tracing and metrics: see the otel module). Calls pay
// nothing for this when there is none.
func WithInterceptor(cs ...interceptor.Client) Option {
	return optionFunc(func(o *options) { o.icpt = append(o.icpt, cs...) })
}

// statsTimeout bounds the wait for one net thread's part of a snapshot.
const statsTimeout = time.Second

// Stats returns a snapshot of what the Communicator counted: calls per (servant, function,
// endpoint) by result with their latency, each net thread's counters, and the state and health
// of every endpoint's connection on every net thread. Each net thread copies its own counters on
// its loop; Stats merges them. A net thread that does not answer within a second is left out.
// Safe for concurrent use, also after Close (which leaves the threads out).
func (c *Communicator) Stats() stats.Snapshot {
	parts := make([]stats.Snapshot, 0, len(c.threads)+1)
	for _, t := range c.threads {
		if s, err := t.Snapshot(statsTimeout); err == nil {
			parts = append(parts, s)
		}
	}
	if c.shared != nil {
		parts = append(parts, c.shared.Snapshot())
	}
	s := stats.Merge(parts...)
	if s.Taken.IsZero() {
		s.Taken = time.Now()
	}
	return s
}

// DebugHandler returns the debug page: an http.Handler that shows Stats (net threads,
// connections, endpoints and their health, per-function latency and errors) and the
// configuration, as HTML, or as JSON with ?format=json. The library starts no HTTP server:
// mount the handler on yours, e.g. http.Handle("/debug/tarscomm/", comm.DebugHandler()).
func (c *Communicator) DebugHandler() http.Handler {
	return debugpage.Handler(c.Stats, debugpage.Options{Title: "tarscomm", Config: c.cfg, Balancers: balancerSettings()})
}

// defaultLogger is the logger of a Communicator given none: JSON lines on standard error from
// level (log-level: debug, info, warn or error) up.
func defaultLogger(level string) *zap.Logger {
	var l zapcore.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = zapcore.InfoLevel
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), l)).Named("tarscomm")
}
