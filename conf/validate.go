package conf

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Limits of the values Validate accepts.
const (
	maxNetThread       = 64                      // TarsCpp's MAX_CLIENT_THREAD_NUM
	maxAsyncThread     = 1024                    // TarsCpp's MAX_CLIENT_ASYNCTHREAD_NUM
	maxServerNetThread = 256                     // gnet event loops of the server
	maxServerThreads   = 1024                    // handler goroutines of a server adapter
	maxServerConns     = 1<<22 - 1               // an adapter's maxconns: TarsCpp's bound
	maxBacklog         = min(1<<40, math.MaxInt) // an adapter's maxbacklog (what int holds on 32-bit systems)
	maxQueueTimeout    = 86400000                // an adapter's queuetimeout, ms: a day
	maxFrameBudget     = min(1<<40, math.MaxInt) // the server's frame-budget
	maxQueueCap        = 1 << 24                 // queue-cap, asyncqueuecap and async-inflight-limit
	minPacketSize      = 64
	maxPacketSize      = 1 << 30
	maxRetries         = 5
	maxConnections     = 64      // connections per endpoint per net thread
	maxCount           = 1000000 // health counts
)

// logLevels are the accepted values of log-level.
var logLevels = []string{"debug", "info", "warn", "error"}

// Validate reports every value out of its range, one line per key, each naming the key as the file
// writes it, e.g. `conf: netthread = 0: must be between 1 and 64` or
// `conf: servant."A.B.C".retries = 9: must be between 0 and 5`. Load and Parse call it; call it
// again after changing a Config in code.
func (c *Config) Validate() error {
	v := validator{}
	v.intRange("netthread", c.NetThread, 1, maxNetThread)
	v.intRange("asyncthread", c.AsyncThread, 1, maxAsyncThread)
	v.intRange("asyncqueuecap", c.AsyncQueueCap, 1, maxQueueCap)
	v.intRange("async-inflight-limit", c.AsyncInFlightLimit, 0, maxQueueCap)
	v.durRange("sync-invoke-timeout", c.SyncInvokeTimeout, time.Millisecond, time.Hour)
	v.durRange("async-invoke-timeout", c.AsyncInvokeTimeout, time.Millisecond, time.Hour)
	v.durRange("connect-timeout", c.ConnectTimeout, time.Millisecond, time.Minute)
	v.durRange("timeout-check-interval", c.TimeoutCheckInterval, time.Millisecond, time.Second)
	v.durRange("refresh-endpoint-interval", c.RefreshEndpointInterval, time.Second, 24*time.Hour)
	if c.KeepAliveInterval != 0 {
		v.durRange("keep-alive-interval", c.KeepAliveInterval, 10*time.Millisecond, time.Hour)
	}
	v.intRange("queue-cap", c.QueueCap, 1, maxQueueCap)
	v.intRange("max-packet-size", c.MaxPacketSize, minPacketSize, maxPacketSize)
	v.intRange("send-buffer-limit", c.SendBufferLimit, 64<<10, 1<<30)
	v.oneOf("log-level", c.LogLevel, logLevels)
	v.oneOf("load-balance", c.LoadBalance, balancerNames)
	c.validateNaming(&v)
	if err := c.Report.Validate(); err != nil {
		v.errs = append(v.errs, err)
	}

	h := &c.Health
	v.intRange("health.min-timeout-invoke", h.MinTimeoutInvoke, 1, maxCount)
	v.durRange("health.check-timeout-interval", h.CheckTimeoutInterval, 10*time.Millisecond, time.Hour)
	if !(h.TimeoutRatio > 0 && h.TimeoutRatio <= 1) { // also rejects NaN
		v.add("health.timeout-ratio", strconv.FormatFloat(h.TimeoutRatio, 'g', -1, 64), "must be greater than 0 and at most 1")
	}
	v.intRange("health.frequent-fail-invoke", h.FrequentFailInvoke, 1, maxCount)
	v.durRange("health.min-frequent-fail-time", h.MinFrequentFailTime, 0, time.Hour)
	v.durRange("health.try-interval", h.TryInterval, 10*time.Millisecond, time.Hour)
	v.intRange("health.max-connect-fail", h.MaxConnectFail, 1, maxCount)

	v.errs = append(v.errs, c.TLS.Check(""), c.Auth.Check(""))
	names := make([]string, 0, len(c.Servants))
	for name := range c.Servants {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := c.Servants[name]
		key := "servant." + quoteKey(name)
		own := s.TLS.Check(key + ".")
		v.errs = append(v.errs, own, s.Auth.Check(key+"."))
		if own == nil && !s.TLS.IsZero() {
			// The servant's keys apply over the top level's (ForServant): the two may not fit
			// together (tls-min-version = "1.3" above, tls-ciphers here).
			if _, _, err := s.TLS.Or(c.TLS).TLSVersions.Parse(key + "."); err != nil {
				v.errs = append(v.errs, fmt.Errorf("%w (with the top-level TLS keys it takes)", err))
			}
		}
		if p := nameProblem(name); p != "" {
			v.errs = append(v.errs, fmt.Errorf("conf: %s: %s", key, p))
		}
		if s.SyncInvokeTimeout != 0 {
			v.durRange(key+".sync-invoke-timeout", s.SyncInvokeTimeout, time.Millisecond, time.Hour)
		}
		if s.AsyncInvokeTimeout != 0 {
			v.durRange(key+".async-invoke-timeout", s.AsyncInvokeTimeout, time.Millisecond, time.Hour)
		}
		if s.LoadBalance != "" {
			v.oneOf(key+".load-balance", s.LoadBalance, balancerNames)
		}
		v.intRange(key+".retries", s.Retries, 0, maxRetries)
		if s.Connections != 0 {
			v.intRange(key+".connections", s.Connections, 1, maxConnections)
		}
		c.validateTail(&v, key, &s)
	}

	v.intRange("server.netthread", c.Server.NetThread, 1, maxServerNetThread)
	v.intRange("server.max-packet-size", c.Server.MaxPacketSize, minPacketSize, maxPacketSize)
	v.intRange("server.frame-budget", c.Server.FrameBudget, -1, maxFrameBudget)
	v.durRange("server.handshake-timeout", c.Server.HandshakeTimeout, time.Millisecond, time.Hour)
	v.errs = append(v.errs, c.Server.ServerTLS.Check("server."))
	seen := make(map[string]int, len(c.Server.Adapters))
	for i, a := range c.Server.Adapters {
		key := "server.adapter[" + strconv.Itoa(i) + "]"
		v.intRange(key+".threads", a.Threads, 0, maxServerThreads)
		v.intRange(key+".queuecap", a.QueueCap, 0, maxQueueCap)
		v.intRange(key+".queuetimeout", a.QueueTimeout, -1, maxQueueTimeout)
		v.intRange(key+".maxconns", a.MaxConns, -1, maxServerConns)
		v.intRange(key+".backpacketlimit", a.BackPacketLimit, -1, math.MaxInt32)
		v.intRange(key+".backpacketmin", a.BackPacketMin, 0, math.MaxInt32)
		v.intRange(key+".maxbacklog", a.MaxBacklog, -1, maxBacklog)
		if a.BackPacketLimit == -1 && a.BackPacketMin != 0 {
			v.add(key+".backpacketmin", strconv.Itoa(a.BackPacketMin), "is part of the slow-reader rule, which backpacketlimit = -1 turns off")
		}
		if a.Threads == 0 {
			// Handlers run inline on the event loops: there is no queue to bound.
			if a.QueueCap > 0 {
				v.add(key+".queuecap", strconv.Itoa(a.QueueCap), "bounds the worker queue: needs threads > 0")
			}
			if a.QueueTimeout > 0 {
				v.add(key+".queuetimeout", strconv.Itoa(a.QueueTimeout), "bounds the wait in the worker queue: needs threads > 0")
			}
		}
		if a.ServerTLS != (ServerTLS{}) {
			// Checked merged, so that an adapter's verifyclient may rely on the [server]'s ca.
			v.errs = append(v.errs, c.Server.ForAdapter(i).ServerTLS.Check(key+"."))
		}
		v.errs = append(v.errs, a.Auth.Check(key+"."))
		if p := nameProblem(a.Servant); p != "" {
			v.add(key+".servant", strconv.Quote(a.Servant), p)
		}
		if j, dup := seen[a.Servant]; dup && a.Servant != "" {
			v.add(key+".servant", strconv.Quote(a.Servant), "already served by server.adapter["+strconv.Itoa(j)+"]")
		}
		seen[a.Servant] = i
		if strings.TrimSpace(a.Endpoint) == "" {
			v.add(key+".endpoint", strconv.Quote(a.Endpoint), "must be an endpoint such as \"tcp -h 127.0.0.1 -p 18015\"")
		}
	}
	return errors.Join(v.errs...)
}

// validateTail checks a servant's settings against tail latency and failing endpoints.
func (c *Config) validateTail(v *validator, key string, s *Servant) {
	v.intRange(key+".max-inflight", s.MaxInflight, 0, maxQueueCap)
	if s.BackupRequest != 0 {
		// No idempotent list is needed: generated stubs mark the methods their .proto says are
		// idempotent.
		v.durRange(key+".backup-request", s.BackupRequest, time.Millisecond, time.Hour)
	}
	for i, fn := range s.Idempotent {
		if strings.TrimSpace(fn) == "" || strings.IndexFunc(fn, unicode.IsSpace) >= 0 {
			v.add(key+".idempotent["+strconv.Itoa(i)+"]", strconv.Quote(fn), "must be a function name")
		}
	}
	v.ratio(key+".backup-budget", s.BackupBudget)
	v.ratio(key+".retry-budget", s.RetryBudget)
	v.intRange(key+".retry-budget-min", s.RetryBudgetMin, 0, maxCount)
	// Keys that would do nothing are refused rather than accepted in silence.
	if s.RetryBudget > 0 && s.RetryBudget <= 1 && s.Retries == 0 {
		v.add(key+".retry-budget", strconv.FormatFloat(s.RetryBudget, 'g', -1, 64), "caps retries: needs retries > 0")
	}
	if s.RetryBudgetMin > 0 && s.RetryBudget == 0 {
		v.add(key+".retry-budget-min", strconv.Itoa(s.RetryBudgetMin), "is part of a retry budget: needs retry-budget > 0")
	}
	if s.BackupRequest == 0 && s.BackupBudget > 0 && s.BackupBudget <= 1 {
		v.add(key+".backup-budget", strconv.FormatFloat(s.BackupBudget, 'g', -1, 64), "caps backup requests: needs backup-request")
	}
	if s.BackupRequest == 0 && len(s.Idempotent) > 0 {
		v.add(key+".idempotent", fmt.Sprintf("%q", s.Idempotent), "names the functions a backup request may send twice: needs backup-request")
	}
}

// ratio checks a fraction: 0..1 (NaN rejected).
func (v *validator) ratio(key string, f float64) {
	if !(f >= 0 && f <= 1) {
		v.add(key, strconv.FormatFloat(f, 'g', -1, 64), "must be between 0 and 1")
	}
}

// validator collects the problems Validate finds.
type validator struct {
	errs []error
}

func (v *validator) add(key, value, problem string) {
	v.errs = append(v.errs, fmt.Errorf("conf: %s = %s: %s", key, value, problem))
}

func (v *validator) intRange(key string, n, lo, hi int) {
	if n < lo || n > hi {
		v.add(key, strconv.Itoa(n), "must be between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
	}
}

func (v *validator) durRange(key string, d, lo, hi time.Duration) {
	if d < lo || d > hi {
		v.add(key, strconv.Quote(d.String()), "must be between "+formatDuration(lo)+" and "+formatDuration(hi))
	}
}

func (v *validator) oneOf(key, s string, allowed []string) {
	if !slices.Contains(allowed, s) {
		v.add(key, strconv.Quote(s), "must be one of "+strings.Join(allowed, ", "))
	}
}

// nameProblem checks a servant name: set, without white space, '@' or '#' (those belong to proxy
// strings, not to object names). It returns "" for a good name.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "servant name must not be empty"
	case strings.ContainsAny(name, "@#") || strings.IndexFunc(name, unicode.IsSpace) >= 0:
		return "servant name must not contain white space, '@' or '#'"
	}
	return ""
}

// formatDuration writes d without the zero units time.Duration.String keeps ("1h", not "1h0m0s").
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
