package server

import (
	"crypto/tls"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/logging"
)

// Option configures a Server; pass options to New (the option style: docs/ARCHITECTURE.md).
type Option func(*options)

// options holds the knobs of a Server; immutable after New.
type options struct {
	logger        *zap.Logger
	maxPacketSize int
	numEventLoop  int
	workers       int
	queueCap      int
	queueBytes    int64                                              // request bytes the worker queue may hold; 0: no bound
	tls           *tls.Config                                        // nil: plain TCP
	handshake     time.Duration                                      // limit of a TLS handshake
	authKeys      func(accessKey string) (secretKey string, ok bool) // nil: no authentication
	icpt          []interceptor.Server                               // around every handler call
	stats         bool                                               // count requests served
	maxConns      int                                                // open connections; 0: no limit
	idle          time.Duration                                      // idle connections close; 0: never
	backlogLimit  int                                                // the slow-reader rule's threshold; 0: off
	backlogMin    int                                                // bytes a backlogged connection sends per window
	maxBacklog    int                                                // unsent reply bytes that close at once; 0: no cap
	frameBudget   int                                                // bytes incomplete large frames reserve together; 0: no budget
	queueTimeout  time.Duration                                      // a request waiting longer for a worker is not run; 0: never
}

// Default values of the options.
const (
	// DefaultQueueCap is the default capacity of the worker queue (WithQueueCap).
	DefaultQueueCap = 10000
	// DefaultQueueTimeout is the default of WithQueueTimeout: TarsCpp's (Application reads an
	// adapter's queuetimeout with a default of 10000 ms).
	DefaultQueueTimeout = 10 * time.Second
	// DefaultHandshakeTimeout is the default limit of a client's TLS handshake (WithTLS).
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultBacklogLimit and DefaultBacklogMin are the defaults of WithBacklog: TarsCpp's
	// (Application reads backpacketlimit with a default of 100 MiB, backpacketmin 1024).
	DefaultBacklogLimit = 100 << 20
	DefaultBacklogMin   = 1024
	// DefaultMaxBacklog is the default of WithMaxBacklog, 256 MiB: room for a client that
	// pipelines a few dozen replies of the default maximum packet size (10 MiB) and reads them as
	// they come, far above what a reader that keeps up leaves behind, yet a bound on what one
	// client can make the server hold.
	DefaultMaxBacklog = 256 << 20
	// DefaultFrameBudget is the default of WithFrameBudget, 256 MiB: room for 25 requests of the
	// default maximum packet size (10 MiB) arriving at once over as many connections, far above
	// what legitimate clients hold in flight at once (a connection assembles one frame at a time,
	// and a client such as the project's Communicator opens one or two connections per net
	// thread), yet a bound on what headers alone can make the server reserve: without it a
	// thousand connections, each sending a header that claims 10 MiB and a byte a minute, would
	// pin 10 GiB.
	DefaultFrameBudget = 256 << 20
	// DefaultQueueBytes is the default of WithQueueBytes, 256 MiB: room for 25 queued requests
	// of the default maximum packet size, and a bound on what requests waiting for a worker can
	// make the server hold (the queue's count alone, DefaultQueueCap requests of up to 10 MiB,
	// would allow about 100 GiB).
	DefaultQueueBytes = 256 << 20
)

func defaultOptions() options {
	return options{
		logger:        logging.Default(""),
		maxPacketSize: codec.DefaultMaxPacketSize,
		queueCap:      DefaultQueueCap,
		queueBytes:    DefaultQueueBytes,
		handshake:     DefaultHandshakeTimeout,
		backlogLimit:  DefaultBacklogLimit,
		backlogMin:    DefaultBacklogMin,
		maxBacklog:    DefaultMaxBacklog,
		frameBudget:   DefaultFrameBudget,
		queueTimeout:  DefaultQueueTimeout,
	}
}

// WithLogger sets the logger of the server and of its gnet engine (logging.FromSlog turns a
// *slog.Logger into one; zap.NewNop() silences the server). The default, logging.Default, writes
// JSON lines to standard error from warn up: the server says nothing until something is wrong (a
// handler panicked). Nothing is logged at Info or below on the per-request path.
func WithLogger(l *zap.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithMaxPacketSize sets the largest frame, length prefix included, the server accepts; a
// longer request is answered RetServerDecode (-1) naming the sizes (a one-way one is not) and
// its bytes are skipped as they arrive, unread, while the connection goes on; a longer datagram
// (udp) is answered -1 the same way (one that holds no request's head is dropped and counted in
// DroppedDatagrams). A reply whose frame would be longer is answered
// RetServerEncode (-2) instead, before the interceptors and stats see its code. Values <= 0 keep
// the default (codec.DefaultMaxPacketSize, 10 MiB).
func WithMaxPacketSize(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxPacketSize = n
		}
	}
}

// WithNumEventLoop sets the number of gnet event loops that own the accepted connections.
// Values <= 0 keep the default, runtime.GOMAXPROCS(0) at Start.
func WithNumEventLoop(n int) Option {
	return func(o *options) {
		o.numEventLoop = max(n, 0)
	}
}

// WithWorkers selects where handlers run. n == 0 (the default) runs every handler inline on the
// event loop that read its request: the fastest mode, for handlers that only use CPU and
// never block. n > 0 runs handlers on n worker goroutines fed by a bounded queue (WithQueueCap),
// so handlers may block or sleep without stalling the loop; the loop writes their replies back
// in batches. Negative values are treated as 0.
func WithWorkers(n int) Option {
	return func(o *options) {
		o.workers = max(n, 0)
	}
}

// WithQueueCap sets the capacity of the worker queue in worker mode (default DefaultQueueCap).
// A request that finds the queue full is answered at once with codec.RetOverload.
// Values <= 0 keep the default.
func WithQueueCap(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.queueCap = n
		}
	}
}

// WithQueueBytes bounds, in worker mode, the bytes of the request frames handed to the workers
// and not finished yet (default DefaultQueueBytes): a request that would take them past n is
// answered at once with codec.RetOverload, as when the queue is full, unless nothing else
// is queued (a request of any size still runs on an idle server). The queue's capacity counts
// requests only; this bounds what one client pipelining large requests to busy workers can make
// the server hold. n <= 0 removes the bound.
func WithQueueBytes(n int64) Option {
	return func(o *options) { o.queueBytes = max(n, 0) }
}

// WithTLS makes the server's adapter an ssl one: every connection is TLS, with cfg's
// certificate (cfg.Certificates or GetCertificate). For mutual TLS set cfg.ClientAuth to
// tls.RequireAndVerifyClientCert and cfg.ClientCAs to the CAs of the clients' certificates;
// tlsconn.ServerConfig builds such a config from PEM files. Each connection's handshake runs on
// a goroutine of its own; a client that does not complete it within the handshake timeout
// (WithHandshakeTimeout) is disconnected, and a failed handshake is logged at debug level and
// never reaches a handler. Then the connection is served on its event loop like a TCP one, its
// records encrypted and decrypted there (package tlsconn). cfg must not be changed afterwards.
// nil keeps plain TCP.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) { o.tls = cfg }
}

// WithHandshakeTimeout sets the limit of a client's TLS handshake with a WithTLS server, and of
// its TARS authentication with a WithAuth server, counted from the connection's opening (from
// the handshake's end over TLS); default DefaultHandshakeTimeout. Values <= 0 keep the default.
func WithHandshakeTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.handshake = d
		}
	}
}

// WithAuth makes every connection authenticate before it is served: TARS local authentication,
// the adapter option -e 1 of TarsCpp (package auth). The first packet of a connection must be
// an auth request for a servant of this server, signed with the secret key that keys returns
// for its access key; the server answers it and then serves the connection. A connection whose
// first packet is anything else, or whose credentials fail, is closed at once, unanswered, and
// the failure logged at info level; so is one that sends no whole auth request within the
// handshake timeout (WithHandshakeTimeout), which would otherwise hold its connection, and
// what it sent, for good. keys must be safe for concurrent use. nil turns authentication off
// (the default).
func WithAuth(keys func(accessKey string) (secretKey string, ok bool)) Option {
	return func(o *options) { o.authKeys = keys }
}

// WithInterceptor adds server interceptors: each runs around every handler call, the first
// given outermost, on the goroutine that runs the handler (tracing: see the otel module); a nil
// one is skipped. The handler gets the ctx the innermost one passes on.
func WithInterceptor(ss ...interceptor.Server) Option {
	return func(o *options) { o.icpt = append(o.icpt, ss...) }
}

// WithStats makes the server count the requests it serves, by (servant, function, the address
// served) and TARS return code with their latency: read them with Stats, report them to TARS's
// stat service with report/stat (FromClient false).
func WithStats() Option {
	return func(o *options) { o.stats = true }
}

// WithMaxConns bounds the open connections of the server, as TarsCpp's adapter key maxconns
// does: a connection accepted beyond n is closed at once (logged at debug level, counted in
// LimitStats). n <= 0, the default, sets no limit.
func WithMaxConns(n int) Option {
	return func(o *options) { o.maxConns = max(n, 0) }
}

// WithIdleTimeout closes a connection on which no byte moved for d, either way, and no work is
// under way: no bytes received, no reply bytes sent (a push subscription whose pushes the client
// reads is not idle), no handler running for one of its requests, no TLS handshake
// (WithHandshakeTimeout bounds that). It is the -t of a TarsCpp adapter's endpoint, with its
// rule: replies waiting for a client that reads none of them do not keep the connection open.
// A connection whose handler still runs is never cut: d counts from the later of its last byte
// and the end of that work. Connections are checked a few times per d (at most every second), so
// one closes between d and about 1.25 d after it fell quiet. d <= 0, the default, never closes
// an idle connection.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) { o.idle = max(d, 0) }
}

// WithBacklog sets TarsCpp's rule against clients that do not read their replies
// (BackPacketBuffLimit and BackPacketBuffMin of TC_EpollServer): while a connection's unsent reply
// bytes (what gnet has buffered, what a large-reply writer has left, replies waiting behind it
// or for the loop) stay above limit, the server measures every 5 s the bytes the client took (on
// Linux those that left the socket's send queue, not only gnet's buffer, which gnet refills only
// once the kernel's queue has drained to half); a connection that took minSent bytes or fewer in
// each of 3 windows in a row is closed, and logged
// at warn level with what it sent. The rule is on by default with TarsCpp's defaults,
// DefaultBacklogLimit (100 MiB) and DefaultBacklogMin (1024 bytes). limit <= 0 turns it off;
// a negative minSent counts as 0. WithMaxBacklog bounds the backlog at once.
func WithBacklog(limit, minSent int) Option {
	return func(o *options) {
		o.backlogLimit, o.backlogMin = max(limit, 0), max(minSent, 0)
	}
}

// WithMaxBacklog closes a connection at once when its unsent reply bytes (as counted by
// WithBacklog, including the replies of the read being served) exceed n: a client that floods
// the server with requests for large replies and reads none cannot make it hold more than about
// n bytes for it, not even for the 15 s WithBacklog's rule takes. The default, DefaultMaxBacklog
// (256 MiB), is far above what a client that reads its replies leaves unsent, even one that
// pipelines several replies of the maximum packet size; a client that keeps more than that in
// replies in flight and reads them more slowly than they are made may be closed: raise the cap
// for such clients. n <= 0 removes the cap.
func WithMaxBacklog(n int) Option {
	return func(o *options) { o.maxBacklog = max(n, 0) }
}

// WithFrameBudget bounds the bytes that incomplete large requests (64 KiB and over) of all the
// server's connections reserve ahead of their arrival. A request whose header has arrived but not
// its body is received into a buffer of its whole length, taken at once, as long as the budget
// has room for that length until the request is complete; a request beyond the budget is not
// refused but received into a buffer that grows with the bytes that actually arrive (a little
// more copying), so that a header claiming the maximum packet size, followed by nothing, pins
// 64 KiB and not the claimed length. LimitStats counts such requests (Grown). The default,
// DefaultFrameBudget (256 MiB), is far above what legitimate clients have in flight at once.
// n <= 0 removes the budget: every incomplete large request takes its whole length at once.
func WithFrameBudget(n int) Option {
	return func(o *options) { o.frameBudget = max(n, 0) }
}

// WithQueueTimeout bounds how long a request may wait in the worker queue (worker mode,
// WithWorkers): one that a worker takes after waiting longer than d, or longer than its
// client's own timeout (Current.Timeout, when the client sent one), is not run; it is answered
// codec.RetQueueTimeout (-6, "server queue timeout"), as TarsCpp's queuetimeout does, and counted
// (LimitStats.QueueTimeout, and Stats under that code with WithStats). Under overload this is what keeps the workers on requests someone
// still waits for, instead of on a queue of calls their clients gave up on. A one-way request
// is dropped. The default is DefaultQueueTimeout (10 s, TarsCpp's); d <= 0 runs every request
// however long it waited. Inline mode has no queue.
func WithQueueTimeout(d time.Duration) Option {
	return func(o *options) { o.queueTimeout = max(d, 0) }
}
