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
}

// ForServant returns the settings that apply to the servant named name (the object name, without
// "#tag" or "@endpoints"): its overrides merged over the communicator's values, so every field
// is set. A servant without a table gets the communicator's values and no retries.
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
	return s
}
