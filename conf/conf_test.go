package conf

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestDefault(t *testing.T) {
	want := Config{
		NetThread:               1,
		AsyncThread:             3,
		AsyncQueueCap:           100000,
		AsyncInFlightLimit:      0,
		SyncInvokeTimeout:       3 * time.Second,
		AsyncInvokeTimeout:      5 * time.Second,
		ConnectTimeout:          1500 * time.Millisecond,
		TimeoutCheckInterval:    10 * time.Millisecond,
		RefreshEndpointInterval: time.Minute,
		KeepAliveInterval:       0,
		QueueCap:                100000,
		MaxPacketSize:           10 << 20,
		SendBufferLimit:         32 << 20,
		LogLevel:                "warn",
		LoadBalance:             "roundrobin",
		Health: Health{
			MinTimeoutInvoke:     1,
			CheckTimeoutInterval: 5 * time.Second,
			TimeoutRatio:         0.05,
			FrequentFailInvoke:   1,
			MinFrequentFailTime:  3 * time.Second,
			TryInterval:          5 * time.Second,
			MaxConnectFail:       1,
		},
		Report: Report{ReportInterval: time.Minute, MaxReportSize: 1400},
		Server: Server{NetThread: 1, MaxPacketSize: 10 << 20, HandshakeTimeout: 10 * time.Second},
	}
	got := Default()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Default() =\n %+v, want\n %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}

	// An empty file is the defaults.
	parsed, err := Parse(nil)
	if err != nil {
		t.Fatalf("Parse(empty): %v", err)
	}
	if !reflect.DeepEqual(parsed, want) {
		t.Fatalf("Parse(empty) =\n %+v, want\n %+v", parsed, want)
	}
}

// fullConfig is what testdata/full.toml says.
func fullConfig() Config {
	c := Default()
	c.Servants = map[string]Servant{
		"Hello.Server.GreeterObj": {
			SyncInvokeTimeout:  time.Second,
			AsyncInvokeTimeout: 2 * time.Second,
			LoadBalance:        "consistenthash",
			Retries:            1,
			Connections:        2,
			BackupRequest:      50 * time.Millisecond,
			BackupBudget:       0.1,
			Idempotent:         []string{"SayHello"},
			RetryBudget:        0.2,
			RetryBudgetMin:     10,
		},
		"Hello.Server.AuditObj": {},
	}
	c.Server.FrameBudget = 256 << 20
	c.Server.Adapters = []Adapter{
		{Servant: "Hello.Server.GreeterObj", Endpoint: "tcp -h 127.0.0.1 -p 18015 -t 60000", Threads: 4, QueueCap: 10000, QueueTimeout: 10000,
			MaxConns: 10240, BackPacketLimit: 100 << 20, BackPacketMin: 1024, MaxBacklog: 256 << 20},
		{Servant: "Hello.Server.AuditObj", Endpoint: "tcp -h ::1 -p 0"},
	}
	return c
}

func TestLoadFullFile(t *testing.T) {
	got, err := Load("testdata/full.toml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := fullConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Load(testdata/full.toml) =\n %+v, want\n %+v", got, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-file.toml")
	if err == nil || !strings.HasPrefix(err.Error(), "conf: open testdata/no-such-file.toml") {
		t.Fatalf("Load(missing) error = %v, want conf: open testdata/no-such-file.toml: ...", err)
	}
}

func TestLoadNamesFile(t *testing.T) {
	path := t.TempDir() + "/client.toml"
	if err := os.WriteFile(path, []byte("netthread = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	want := path + ": conf: netthread = 0: must be between 1 and 64"
	if err == nil || err.Error() != want {
		t.Fatalf("Load error = %v, want %q", err, want)
	}
}

// TestRoundTrip encodes configurations with the toml encoder and parses them back.
func TestRoundTrip(t *testing.T) {
	custom := fullConfig()
	custom.NetThread = 8
	custom.AsyncThread = 16
	custom.AsyncQueueCap = 50000
	custom.AsyncInFlightLimit = 20000
	custom.SyncInvokeTimeout = 1500 * time.Millisecond
	custom.AsyncInvokeTimeout = 2500 * time.Millisecond
	custom.ConnectTimeout = 200 * time.Millisecond
	custom.TimeoutCheckInterval = 5 * time.Millisecond
	custom.RefreshEndpointInterval = 30 * time.Second
	custom.KeepAliveInterval = 10 * time.Second
	custom.QueueCap = 1000
	custom.MaxPacketSize = 1 << 20
	custom.LogLevel = "debug"
	custom.LoadBalance = "weighted"
	custom.Health = Health{
		MinTimeoutInvoke:     2,
		CheckTimeoutInterval: time.Minute,
		TimeoutRatio:         0.5,
		FrequentFailInvoke:   5,
		MinFrequentFailTime:  5 * time.Second,
		TryInterval:          30 * time.Second,
		MaxConnectFail:       5,
	}
	custom.Server.NetThread = 4
	custom.Server.MaxPacketSize = 4 << 20

	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "default", cfg: Default()},
		{name: "full file", cfg: fullConfig()},
		{name: "every key changed", cfg: custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := toml.NewEncoder(&buf).Encode(tt.cfg); err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("Parse(encoded): %v\n%s", err, buf.String())
			}
			if !reflect.DeepEqual(got, tt.cfg) {
				t.Fatalf("round trip =\n %+v, want\n %+v\nencoded:\n%s", got, tt.cfg, buf.String())
			}
		})
	}
}

func TestDurations(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{in: `sync-invoke-timeout = "3s"`, want: 3 * time.Second},
		{in: `sync-invoke-timeout = "1500ms"`, want: 1500 * time.Millisecond},
		{in: `sync-invoke-timeout = "1m30s"`, want: 90 * time.Second},
		{in: `sync-invoke-timeout = "250us"`, want: 0}, // below 1ms: rejected
	}
	for _, tt := range tests {
		c, err := Parse([]byte(tt.in))
		if tt.want == 0 {
			if err == nil {
				t.Errorf("Parse(%s) succeeded, want an error", tt.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s): %v", tt.in, err)
			continue
		}
		if c.SyncInvokeTimeout != tt.want {
			t.Errorf("Parse(%s).SyncInvokeTimeout = %v, want %v", tt.in, c.SyncInvokeTimeout, tt.want)
		}
	}
}

// TestParseErrors checks that what the decoder rejects is named in the error.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // the error contains this
	}{
		{name: "unknown top-level key", in: "netthreads = 2", want: "conf: unknown key netthreads"},
		{name: "unknown nested key", in: "[health]\ntimeout-radio = 0.5", want: "conf: unknown key health.timeout-radio"},
		{name: "unknown table", in: "[client]\nnetthread = 2", want: "conf: unknown key client"},
		{name: "unknown servant key", in: "[servant.\"A.B.C\"]\nretry = 1", want: `conf: unknown key servant."A.B.C".retry`},
		{name: "unknown adapter key", in: "[[server.adapter]]\nservant = \"A\"\nendpoint = \"tcp -h a\"\nport = 1", want: "conf: unknown key server.adapter.port"},
		{name: "bad duration", in: `connect-timeout = "3x"`, want: `invalid duration: "3x"`},
		{name: "duration without unit in a string", in: `connect-timeout = "1500"`, want: `invalid duration: "1500"`},
		{name: "duration as integer", in: "sync-invoke-timeout = 3000", want: `conf: sync-invoke-timeout: a duration is a string with a unit, e.g. "3s" or "1500ms"`},
		{name: "nested duration as integer", in: "[health]\ntry-interval = 30", want: `conf: health.try-interval: a duration is a string with a unit`},
		{name: "wrong type", in: `netthread = "2"`, want: `netthread`},
		{name: "not toml", in: "netthread = = 1", want: "conf: toml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want an error containing %q", tt.in, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) error = %q, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

// TestValidate breaks one key at a time and checks the error names it.
func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string // the whole error
	}{
		{"netthread low", func(c *Config) { c.NetThread = 0 }, "conf: netthread = 0: must be between 1 and 64"},
		{"netthread high", func(c *Config) { c.NetThread = 65 }, "conf: netthread = 65: must be between 1 and 64"},
		{"asyncthread", func(c *Config) { c.AsyncThread = 0 }, "conf: asyncthread = 0: must be between 1 and 1024"},
		{"asyncthread high", func(c *Config) { c.AsyncThread = 1025 }, "conf: asyncthread = 1025: must be between 1 and 1024"},
		{"asyncqueuecap", func(c *Config) { c.AsyncQueueCap = 0 }, "conf: asyncqueuecap = 0: must be between 1 and 16777216"},
		{"async-inflight-limit negative", func(c *Config) { c.AsyncInFlightLimit = -1 }, "conf: async-inflight-limit = -1: must be between 0 and 16777216"},
		{"async-inflight-limit high", func(c *Config) { c.AsyncInFlightLimit = 1<<24 + 1 }, "conf: async-inflight-limit = 16777217: must be between 0 and 16777216"},
		{"sync-invoke-timeout", func(c *Config) { c.SyncInvokeTimeout = 0 }, `conf: sync-invoke-timeout = "0s": must be between 1ms and 1h`},
		{"async-invoke-timeout", func(c *Config) { c.AsyncInvokeTimeout = 2 * time.Hour }, `conf: async-invoke-timeout = "2h0m0s": must be between 1ms and 1h`},
		{"connect-timeout", func(c *Config) { c.ConnectTimeout = -time.Second }, `conf: connect-timeout = "-1s": must be between 1ms and 1m`},
		{"timeout-check-interval low", func(c *Config) { c.TimeoutCheckInterval = time.Microsecond }, `conf: timeout-check-interval = "1µs": must be between 1ms and 1s`},
		{"timeout-check-interval high", func(c *Config) { c.TimeoutCheckInterval = 2 * time.Second }, `conf: timeout-check-interval = "2s": must be between 1ms and 1s`},
		{"refresh-endpoint-interval", func(c *Config) { c.RefreshEndpointInterval = 10 * time.Millisecond }, `conf: refresh-endpoint-interval = "10ms": must be between 1s and 24h`},
		{"keep-alive-interval", func(c *Config) { c.KeepAliveInterval = 5 * time.Millisecond }, `conf: keep-alive-interval = "5ms": must be between 10ms and 1h`},
		{"queue-cap", func(c *Config) { c.QueueCap = -1 }, "conf: queue-cap = -1: must be between 1 and 16777216"},
		{"max-packet-size low", func(c *Config) { c.MaxPacketSize = 63 }, "conf: max-packet-size = 63: must be between 64 and 1073741824"},
		{"max-packet-size high", func(c *Config) { c.MaxPacketSize = 1<<30 + 1 }, "conf: max-packet-size = 1073741825: must be between 64 and 1073741824"},
		{"log-level", func(c *Config) { c.LogLevel = "verbose" }, `conf: log-level = "verbose": must be one of debug, info, warn, error`},
		{"load-balance", func(c *Config) { c.LoadBalance = "rr" }, `conf: load-balance = "rr": must be one of roundrobin, weighted, random, hash, consistenthash, least-inflight, p2c`},
		{"load-balance empty", func(c *Config) { c.LoadBalance = "" }, `conf: load-balance = "": must be one of roundrobin, weighted, random, hash, consistenthash, least-inflight, p2c`},
		{"health.min-timeout-invoke", func(c *Config) { c.Health.MinTimeoutInvoke = 0 }, "conf: health.min-timeout-invoke = 0: must be between 1 and 1000000"},
		{"health.check-timeout-interval", func(c *Config) { c.Health.CheckTimeoutInterval = 0 }, `conf: health.check-timeout-interval = "0s": must be between 10ms and 1h`},
		{"health.timeout-ratio zero", func(c *Config) { c.Health.TimeoutRatio = 0 }, "conf: health.timeout-ratio = 0: must be greater than 0 and at most 1"},
		{"health.timeout-ratio high", func(c *Config) { c.Health.TimeoutRatio = 1.5 }, "conf: health.timeout-ratio = 1.5: must be greater than 0 and at most 1"},
		{"health.timeout-ratio NaN", func(c *Config) { c.Health.TimeoutRatio = math.NaN() }, "conf: health.timeout-ratio = NaN: must be greater than 0 and at most 1"},
		{"health.frequent-fail-invoke", func(c *Config) { c.Health.FrequentFailInvoke = 0 }, "conf: health.frequent-fail-invoke = 0: must be between 1 and 1000000"},
		{"health.min-frequent-fail-time", func(c *Config) { c.Health.MinFrequentFailTime = -1 }, `conf: health.min-frequent-fail-time = "-1ns": must be between 0s and 1h`},
		{"health.try-interval", func(c *Config) { c.Health.TryInterval = time.Millisecond }, `conf: health.try-interval = "1ms": must be between 10ms and 1h`},
		{"health.max-connect-fail", func(c *Config) { c.Health.MaxConnectFail = 0 }, "conf: health.max-connect-fail = 0: must be between 1 and 1000000"},
		{"servant retries", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {Retries: 9}} }, `conf: servant."A.B.C".retries = 9: must be between 0 and 5`},
		{"servant connections", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {Connections: 65}} }, `conf: servant."A.B.C".connections = 65: must be between 1 and 64`},
		{"servant negative connections", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {Connections: -1}} }, `conf: servant."A.B.C".connections = -1: must be between 1 and 64`},
		{"servant negative retries", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {Retries: -1}} }, `conf: servant."A.B.C".retries = -1: must be between 0 and 5`},
		{"servant sync-invoke-timeout", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {SyncInvokeTimeout: -time.Second}} }, `conf: servant."A.B.C".sync-invoke-timeout = "-1s": must be between 1ms and 1h`},
		{"servant async-invoke-timeout", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {AsyncInvokeTimeout: 2 * time.Hour}} }, `conf: servant."A.B.C".async-invoke-timeout = "2h0m0s": must be between 1ms and 1h`},
		{"servant max-inflight", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {MaxInflight: -1}} }, `conf: servant."A.B.C".max-inflight = -1: must be between 0 and 16777216`},
		{"servant backup-request range", func(c *Config) {
			c.Servants = map[string]Servant{"A.B.C": {BackupRequest: time.Microsecond, Idempotent: []string{"Get"}}}
		}, `conf: servant."A.B.C".backup-request = "1µs": must be between 1ms and 1h`},
		{"servant idempotent name", func(c *Config) {
			c.Servants = map[string]Servant{"A.B.C": {BackupRequest: time.Second, Idempotent: []string{"Get", " "}}}
		}, `conf: servant."A.B.C".idempotent[1] = " ": must be a function name`},
		{"servant backup-budget", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {BackupBudget: 1.5}} }, `conf: servant."A.B.C".backup-budget = 1.5: must be between 0 and 1`},
		{"servant retry-budget", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {RetryBudget: -0.1}} }, `conf: servant."A.B.C".retry-budget = -0.1: must be between 0 and 1`},
		{"servant retry-budget-min", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {RetryBudgetMin: -1}} }, `conf: servant."A.B.C".retry-budget-min = -1: must be between 0 and 1000000`},
		{"servant load-balance", func(c *Config) { c.Servants = map[string]Servant{"A.B.C": {LoadBalance: "x"}} }, `conf: servant."A.B.C".load-balance = "x": must be one of roundrobin, weighted, random, hash, consistenthash, least-inflight, p2c`},
		{"servant bare name", func(c *Config) { c.Servants = map[string]Servant{"Greeter": {Retries: 6}} }, `conf: servant.Greeter.retries = 6: must be between 0 and 5`},
		{"servant empty name", func(c *Config) { c.Servants = map[string]Servant{"": {}} }, `conf: servant."": servant name must not be empty`},
		{"servant name with endpoints", func(c *Config) { c.Servants = map[string]Servant{"A@tcp -h a": {}} }, `conf: servant."A@tcp -h a": servant name must not contain white space, '@' or '#'`},
		{"server.netthread", func(c *Config) { c.Server.NetThread = 0 }, "conf: server.netthread = 0: must be between 1 and 256"},
		{"server.max-packet-size", func(c *Config) { c.Server.MaxPacketSize = 0 }, "conf: server.max-packet-size = 0: must be between 64 and 1073741824"},
		{"server.frame-budget", func(c *Config) { c.Server.FrameBudget = -2 }, "conf: server.frame-budget = -2: must be between -1 and 1099511627776"},
		{"adapter maxconns", func(c *Config) { c.Server.Adapters = []Adapter{{Servant: "A", Endpoint: "tcp -h a", MaxConns: -2}} }, "conf: server.adapter[0].maxconns = -2: must be between -1 and 4194303"},
		{"adapter backpacketlimit", func(c *Config) {
			big := int64(1) << 31 // a variable: the constant would not compile where int has 32 bits
			c.Server.Adapters = []Adapter{{Servant: "A", Endpoint: "tcp -h a", BackPacketLimit: int(big)}}
		}, "conf: server.adapter[0].backpacketlimit = 2147483648: must be between -1 and 2147483647"},
		{"adapter backpacketmin", func(c *Config) {
			c.Server.Adapters = []Adapter{{Servant: "A", Endpoint: "tcp -h a", BackPacketMin: -1}}
		}, "conf: server.adapter[0].backpacketmin = -1: must be between 0 and 2147483647"},
		{"adapter maxbacklog", func(c *Config) { c.Server.Adapters = []Adapter{{Servant: "A", Endpoint: "tcp -h a", MaxBacklog: -5}} }, "conf: server.adapter[0].maxbacklog = -5: must be between -1 and 1099511627776"},
		{"adapter servant", func(c *Config) { c.Server.Adapters = []Adapter{{Endpoint: "tcp -h a"}} }, `conf: server.adapter[0].servant = "": servant name must not be empty`},
		{"adapter endpoint", func(c *Config) { c.Server.Adapters = []Adapter{{Servant: "A", Endpoint: " "}} }, `conf: server.adapter[0].endpoint = " ": must be an endpoint such as "tcp -h 127.0.0.1 -p 18015"`},
		{"adapter duplicate", func(c *Config) {
			c.Server.Adapters = []Adapter{{Servant: "A", Endpoint: "tcp -h a"}, {Servant: "A", Endpoint: "tcp -h b"}}
		}, `conf: server.adapter[1].servant = "A": already served by server.adapter[0]`},
		{"several at once", func(c *Config) { c.NetThread = 0; c.LogLevel = "x" },
			"conf: netthread = 0: must be between 1 and 64\nconf: log-level = \"x\": must be one of debug, info, warn, error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestValidateBounds checks that the documented bounds themselves are accepted.
func TestValidateBounds(t *testing.T) {
	c := Default()
	c.NetThread = 64
	c.AsyncThread = 1024
	c.AsyncInFlightLimit = 1 << 24
	c.TimeoutCheckInterval = time.Millisecond
	c.KeepAliveInterval = time.Second
	c.MaxPacketSize = 64
	c.Health.TimeoutRatio = 1
	c.Health.MinFrequentFailTime = 0
	c.Servants = map[string]Servant{"A.B.C": {Retries: 5}, "D": {}}
	c.Server.NetThread = 256
	c.Server.MaxPacketSize = 1 << 30
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
}

func TestForServant(t *testing.T) {
	c := Default()
	c.SyncInvokeTimeout = 2 * time.Second
	c.LoadBalance = "random"
	c.Servants = map[string]Servant{
		"Full":    {SyncInvokeTimeout: time.Second, AsyncInvokeTimeout: 7 * time.Second, LoadBalance: "hash", Retries: 2, BackupBudget: 0.3, Connections: 4},
		"Partial": {AsyncInvokeTimeout: 9 * time.Second, Retries: 1},
		"Empty":   {},
	}
	tests := []struct {
		name string
		want Servant
	}{
		{name: "Full", want: Servant{SyncInvokeTimeout: time.Second, AsyncInvokeTimeout: 7 * time.Second, LoadBalance: "hash", Retries: 2, BackupBudget: 0.3, Connections: 4}},
		{name: "Partial", want: Servant{SyncInvokeTimeout: 2 * time.Second, AsyncInvokeTimeout: 9 * time.Second, LoadBalance: "random", Retries: 1, BackupBudget: DefaultBackupBudget, Connections: 1}},
		{name: "Empty", want: Servant{SyncInvokeTimeout: 2 * time.Second, AsyncInvokeTimeout: 5 * time.Second, LoadBalance: "random", BackupBudget: DefaultBackupBudget, Connections: 1}},
		{name: "Unlisted", want: Servant{SyncInvokeTimeout: 2 * time.Second, AsyncInvokeTimeout: 5 * time.Second, LoadBalance: "random", BackupBudget: DefaultBackupBudget, Connections: 1}},
	}
	for _, tt := range tests {
		if got := c.ForServant(tt.name); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ForServant(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := c.Servants["Partial"]; got.SyncInvokeTimeout != 0 {
		t.Errorf("ForServant changed the stored override: %+v", got)
	}
}
