package asyncproc

import "go.uber.org/zap/zapcore"

// zapFatalOnly silences expected error logs in tests.
type zapFatalOnly struct{}

func (zapFatalOnly) Enabled(l zapcore.Level) bool { return l >= zapcore.FatalLevel }
