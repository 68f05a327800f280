package communicator

import (
	"testing"

	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/conf"
)

// TestLogLevel checks that log-level sets the level of the logger a Communicator builds when it
// is given none, warn when the configuration leaves it at its default.
func TestLogLevel(t *testing.T) {
	for _, tc := range []struct {
		level      string
		on, offLow zapcore.Level
	}{
		{conf.Default().LogLevel, zapcore.WarnLevel, zapcore.InfoLevel},
		{"debug", zapcore.DebugLevel, zapcore.DebugLevel - 1},
		{"info", zapcore.InfoLevel, zapcore.DebugLevel},
		{"warn", zapcore.WarnLevel, zapcore.InfoLevel},
		{"error", zapcore.ErrorLevel, zapcore.WarnLevel},
	} {
		cfg := conf.Default()
		cfg.LogLevel = tc.level
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		core := c.log.Core()
		if !core.Enabled(tc.on) || core.Enabled(tc.offLow) {
			t.Errorf("log-level %q: %v enabled %v, %v enabled %v", tc.level, tc.on, core.Enabled(tc.on), tc.offLow, core.Enabled(tc.offLow))
		}
		_ = c.Close()
	}
}
