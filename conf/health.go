package conf

import "time"

// Health holds the endpoint health thresholds of TarsCpp's CheckTimeoutInfo (servant/Message.h),
// with its defaults as of TarsCpp 3.x (2025). An AdapterProxy marks its endpoint inactive when
// any of these holds:
//
//  1. at the end of a check window of CheckTimeoutInterval, the window saw at least
//     MinTimeoutInvoke failed calls and failures were at least TimeoutRatio of its calls;
//  2. FrequentFailInvoke calls in a row failed, the first of them at least MinFrequentFailTime
//     ago (at once if FrequentFailInvoke is 1);
//  3. MaxConnectFail connection attempts in a row failed.
//
// An inactive endpoint gets no calls while another is active; every TryInterval one call is let
// through to probe it, and a success makes it active again (so does the client's own probe, a
// tars_ping answered on a connection made since it went out). When every endpoint is inactive the
// balancer still picks one, so calls keep probing.
type Health struct {
	// MinTimeoutInvoke is the least number of failed calls in a window for rule 1. TarsCpp
	// minTimeoutInvoke: default 1.
	MinTimeoutInvoke int `toml:"min-timeout-invoke"`

	// CheckTimeoutInterval is the window of rule 1. TarsCpp checkTimeoutInterval: default 5s.
	CheckTimeoutInterval time.Duration `toml:"check-timeout-interval"`

	// TimeoutRatio is the share of failed calls in a window for rule 1, in (0, 1]. TarsCpp
	// radio: default 0.05.
	TimeoutRatio float64 `toml:"timeout-ratio"`

	// FrequentFailInvoke is the number of consecutive failed calls for rule 2. TarsCpp
	// frequenceFailInvoke: default 1.
	FrequentFailInvoke int `toml:"frequent-fail-invoke"`

	// MinFrequentFailTime is how long consecutive failures must have lasted for rule 2. TarsCpp
	// minFrequenceFailTime: default 3s.
	MinFrequentFailTime time.Duration `toml:"min-frequent-fail-time"`

	// TryInterval is how often an inactive endpoint is given one user call to prove itself, and
	// the longest wait between the client's own probes of it (every 250 ms for two seconds, then
	// doubling).
	// TarsCpp tryTimeInterval: default 5s.
	TryInterval time.Duration `toml:"try-interval"`

	// MaxConnectFail is the number of consecutive failed connects for rule 3. TarsCpp
	// maxConnectExc: default 1.
	MaxConnectFail int `toml:"max-connect-fail"`
}

// defaultHealth returns TarsCpp's CheckTimeoutInfo defaults.
func defaultHealth() Health {
	return Health{
		MinTimeoutInvoke:     1,
		CheckTimeoutInterval: 5 * time.Second,
		TimeoutRatio:         0.05,
		FrequentFailInvoke:   1,
		MinFrequentFailTime:  3 * time.Second,
		TryInterval:          5 * time.Second,
		MaxConnectFail:       1,
	}
}
