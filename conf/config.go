package conf

import (
	"maps"
	"slices"
	"time"
)

// Config configures a Communicator (the top-level keys, [health] and [servant."Obj"]) and the
// project's own server ([server]). Every key is optional: Default holds the value of each, which
// is TARS's where TARS has the key. Durations are strings with a unit, "3s" or "1500ms".
type Config struct {
	// NetThread is the number of net threads (gnet event loops) of the communicator, each with
	// its own connections to every endpoint. TARS "netthread": default 1, at most 64
	// (TarsCpp's MAX_CLIENT_THREAD_NUM).
	NetThread int `toml:"netthread"`

	// AsyncThread is the number of goroutines running async callbacks. TARS "asyncthread":
	// default 3, 1..1024 (TarsCpp's MAX_CLIENT_ASYNCTHREAD_NUM). A callback that waits for a
	// future (Get, Join) or a Close lends its goroutine's place to a stand-in while it waits, so
	// that what it waits for can run: each callback so waiting adds one goroutine running
	// callbacks from its first wait (for a future after 1 ms, in a Close at once) until it
	// returns, and callbacks may then start out of their order.
	AsyncThread int `toml:"asyncthread"`

	// AsyncQueueCap bounds the callbacks waiting for an async goroutine, as TarsCpp's
	// "asyncqueuecap": while this many or more replies wait for their callback to run,
	// AsyncInvoke fails at once with ErrQueueFull. Calls in flight do not count, and a reply that
	// arrives is never dropped nor blocks its net thread: the calls already sent when the queue
	// fills still get their callback, so the queue can briefly hold more than this. Default 100000,
	// TarsCpp's (TarsCpp drops the reply instead when its queue is full).
	AsyncQueueCap int `toml:"asyncqueuecap"`

	// AsyncInFlightLimit bounds the async calls not yet finished: sent and awaiting their reply,
	// waiting for an async goroutine, or running their callback. Beyond it AsyncInvoke fails at
	// once with ErrQueueFull. 0, the default, is no limit (TARS has no such key): the calls
	// queued on a net thread are bounded by queue-cap and send-buffer-limit, and each ends by its
	// timeout.
	AsyncInFlightLimit int `toml:"async-inflight-limit"`

	// SyncInvokeTimeout is the timeout of a synchronous call whose context has no earlier
	// deadline. TARS "sync-invoke-timeout" (milliseconds there): default 3s.
	SyncInvokeTimeout time.Duration `toml:"sync-invoke-timeout"`

	// AsyncInvokeTimeout is the same for asynchronous calls. TARS "async-invoke-timeout":
	// default 5s.
	AsyncInvokeTimeout time.Duration `toml:"async-invoke-timeout"`

	// ConnectTimeout bounds a TCP connect to an endpoint. TARS "connect-timeout": default 1.5s.
	ConnectTimeout time.Duration `toml:"connect-timeout"`

	// TimeoutCheckInterval is the tick at which a net thread expires timed-out calls; a call
	// outlives its deadline by at most this much. Default 10ms, 1ms..1s. (TarsCpp's
	// "timeoutcheckinterval" defaults to 100ms.) A net thread with no call waiting is not woken
	// at this tick, only for its connections' chores (every 100ms, or a quarter of
	// keep-alive-interval when that is shorter). It also bounds how long one connection's flush
	// of a large backlog may hold its net thread before the rest waits for the next turn.
	TimeoutCheckInterval time.Duration `toml:"timeout-check-interval"`

	// RefreshEndpointInterval is how often endpoints are asked again of the registry (the
	// locator, or a naming source that polls a registry). TARS "refresh-endpoint-interval":
	// default 60s. A dns:// naming source polls at its own ?interval= (default 10s), a naming
	// file is read every 250 ms and etcd is watched: none of them reads this key.
	RefreshEndpointInterval time.Duration `toml:"refresh-endpoint-interval"`

	// KeepAliveInterval is how long a connection may make no progress (nothing read, no waiting
	// byte taken; writes do not count) before it sends a TARS ping, which closes it if it goes
	// unanswered with no progress; 0 turns keep-alive off. TARS "keep-alive-interval": default 0
	// (off).
	KeepAliveInterval time.Duration `toml:"keep-alive-interval"`

	// QueueCap bounds each net thread's queue of requests not yet handed to a connection; a call
	// finding it full fails at once with a queue-full error. Default 100000, as TarsCpp's
	// "sendqueuelimit".
	QueueCap int `toml:"queue-cap"`

	// MaxPacketSize is the largest response frame accepted, in bytes; a larger reply fails its
	// call with ErrDecode and is skipped unread, the connection going on. A call whose request
	// frame is larger fails unsent (ErrRequestTooLarge). Default 10 MiB (TarsGo's MaxPackageLength), 64..1 GiB.
	MaxPacketSize int `toml:"max-packet-size"`

	// SendBufferLimit bounds the bytes one connection may hold unsent while its server does not
	// read; beyond it calls to that endpoint fail at once with ErrQueueFull instead of growing
	// memory. Default 32 MiB; at least 64 KiB.
	SendBufferLimit int `toml:"send-buffer-limit"`

	// LogLevel is the lowest level logged by the logger a Communicator builds when given none
	// (see package logging): debug, info, warn or error. Default "warn": the library says nothing
	// until something is wrong.
	LogLevel string `toml:"log-level"`

	// LoadBalance is the default balancer choosing among a servant's endpoints: roundrobin,
	// weighted, random, hash, consistenthash, least-inflight or p2c (objectproxy's registry,
	// objectproxy.Balancers).
	// Default "roundrobin".
	LoadBalance string `toml:"load-balance"`

	// Health holds the thresholds that mark an endpoint inactive. Table [health].
	Health Health `toml:"health"`

	// Naming: naming, locator, enableset, setdivision, endpoint-cache, naming-file (conf/naming.go).
	Naming

	// Report: stat, property, modulename, report-interval, max-report-size (conf/report.go).
	Report

	// Servants holds per-servant overrides, keyed by object name: [servant."Hello.Server.GreeterObj"].
	// Read them with ForServant.
	Servants map[string]Servant `toml:"servant,omitempty"`

	// Server configures the project's gnet TARS server. Table [server].
	Server Server `toml:"server"`

	// TLS holds ca, cert, key and server-name: the TLS settings of ssl endpoints (conf/tls.go).
	TLS
	// Auth holds accesskey and secretkey: the credentials for -e 1 endpoints (conf/tls.go).
	Auth
}

// Default values of the keys, where they are not TARS's own (those are written in Default).
const (
	defaultMaxPacketSize = 10 << 20
	defaultLoadBalance   = "roundrobin"
)

// Default returns the configuration with every key at its default: TARS's values for TARS's keys.
func Default() Config {
	return Config{
		NetThread:               1,
		AsyncThread:             3,
		AsyncQueueCap:           100000,
		AsyncInFlightLimit:      0,
		SyncInvokeTimeout:       3 * time.Second,
		AsyncInvokeTimeout:      5 * time.Second,
		ConnectTimeout:          1500 * time.Millisecond,
		TimeoutCheckInterval:    10 * time.Millisecond,
		RefreshEndpointInterval: 60 * time.Second,
		KeepAliveInterval:       0,
		QueueCap:                100000,
		MaxPacketSize:           defaultMaxPacketSize,
		SendBufferLimit:         32 << 20,
		LogLevel:                "warn",
		LoadBalance:             defaultLoadBalance,
		Health:                  defaultHealth(),
		Report:                  DefaultReport(),
		Server:                  defaultServer(),
	}
}

// Clone returns a copy of c that shares no memory with it: its servant table, their idempotent
// lists and the server's adapters are copied too. A Communicator keeps a clone of the
// configuration it validated, so that a caller changing its own value afterwards changes
// nothing it runs with.
func (c Config) Clone() Config {
	if c.Servants != nil {
		c.Servants = maps.Clone(c.Servants)
		for name, s := range c.Servants {
			s.Idempotent = slices.Clone(s.Idempotent)
			c.Servants[name] = s
		}
	}
	c.Server.Adapters = slices.Clone(c.Server.Adapters)
	return c
}
