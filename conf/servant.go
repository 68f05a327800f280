package conf

import "time"

// Servant holds per-servant overrides, the table [servant."Hello.Server.GreeterObj"]. A zero
// value means "use the communicator's".
type Servant struct {
	// SyncInvokeTimeout overrides Config.SyncInvokeTimeout for this servant; 0 keeps it.
	SyncInvokeTimeout time.Duration `toml:"sync-invoke-timeout"`

	// AsyncInvokeTimeout overrides Config.AsyncInvokeTimeout for this servant; 0 keeps it.
	AsyncInvokeTimeout time.Duration `toml:"async-invoke-timeout"`

	// LoadBalance overrides Config.LoadBalance for this servant; "" keeps it.
	LoadBalance string `toml:"load-balance"`

	// Retries is how many more endpoints a failed call may try before it fails, 0..5. Default
	// 0: TARS does not retry.
	Retries int `toml:"retries"`

	// Connections is how many connections each net thread keeps to each endpoint of this
	// servant, 1..64; calls sent to an endpoint go to its connections in turn, and each
	// connection has its own health; a call that failed unsent on one moves to another that is
	// open or dialling, without using a retry. More than one spreads a thread's calls over several
	// backends behind a VIP (LVS, a Kubernetes ClusterIP service) that pins a connection to one.
	// 0 means 1, as in TARS.
	Connections int `toml:"connections"`

	// ShortConnections closes a connection as soon as it holds no call (its last reply read)
	// and connects again for the next call: for a servant called rarely, which then holds no
	// idle connection. Calls made at the same time still share a connection. A udp endpoint's
	// socket is kept (it holds nothing on the server).
	ShortConnections bool `toml:"short-connections"`

	// The settings below are against tail latency and failing endpoints; each is off unless set.

	// MaxInflight caps this servant's calls in flight from this Communicator; beyond it a call
	// fails at once with ErrOverload, unsent. 0: no limit.
	MaxInflight int `toml:"max-inflight"`

	// BackupRequest, when set, sends a call (sync, async or future) of an idempotent function (listed in Idempotent,
	// or marked in its .proto with option idempotency_level = IDEMPOTENT for the stubs of
	// protoc-gen-go-tars) again, to another healthy endpoint, when it has had no reply after
	// this long; the first reply wins. A hashed call (WithHash) has none: its endpoint is the
	// hash's. 0: off.
	BackupRequest time.Duration `toml:"backup-request"`

	// BackupBudget caps backup requests at this fraction of the calls that may have one,
	// 0..1; 0 means DefaultBackupBudget (0.1).
	BackupBudget float64 `toml:"backup-budget"`

	// Idempotent lists the functions that may be sent twice (backup requests).
	Idempotent []string `toml:"idempotent"`

	// RetryBudget caps retries at this fraction of the calls, 0..1, plus RetryBudgetMin retries
	// a second on each net thread (a token bucket, which starts with RetryBudgetMin tokens: none
	// when it is 0). 0: retries are not budgeted.
	RetryBudget    float64 `toml:"retry-budget"`
	RetryBudgetMin int     `toml:"retry-budget-min"`

	// CircuitBreaker turns on a circuit breaker per endpoint: an endpoint whose share of failed
	// calls (timeouts, lost connections, framework error codes) grows over a short or a long
	// window of calls is isolated, for longer each time it trips again, and revived by a probe.
	CircuitBreaker bool `toml:"circuit-breaker"`

	// TLS overrides the communicator's ca, cert, key and server-name for this servant.
	TLS
	// Auth overrides the communicator's accesskey and secretkey for this servant.
	Auth
}

// DefaultBackupBudget is the backup-budget of a servant that sets none (or sets 0).
const DefaultBackupBudget = 0.1

// ForServant returns the settings that apply to the servant named name (the object name, without
// "#tag" or "@endpoints"): its overrides merged over the communicator's values, so every field
// is set (a backup-budget left at 0 is DefaultBackupBudget, connections left at 0 is 1). A servant without a table gets the
// communicator's values and no retries.
func (c *Config) ForServant(name string) Servant {
	s := c.Servants[name]
	if s.SyncInvokeTimeout == 0 {
		s.SyncInvokeTimeout = c.SyncInvokeTimeout
	}
	if s.AsyncInvokeTimeout == 0 {
		s.AsyncInvokeTimeout = c.AsyncInvokeTimeout
	}
	if s.LoadBalance == "" {
		s.LoadBalance = c.LoadBalance
	}
	if s.BackupBudget == 0 {
		s.BackupBudget = DefaultBackupBudget
	}
	if s.Connections == 0 {
		s.Connections = 1
	}
	s.TLS = s.TLS.Or(c.TLS)
	s.Auth = s.Auth.Or(c.Auth)
	return s
}
