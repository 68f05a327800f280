package logging

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// FromSlog returns a *zap.Logger that writes through l's handler; nil means slog.Default().
// zap's levels map to slog's as Debug -4, Info 0, Warn 4, Error 8 (DPanic, Panic and Fatal
// above Error). The caller's source position is passed on for handlers with AddSource.
func FromSlog(l *slog.Logger) *zap.Logger {
	if l == nil {
		l = slog.Default()
	}
	return zap.New(slogCore{h: l.Handler()}, zap.AddCaller())
}

// slogCore is a zapcore.Core over a slog.Handler.
type slogCore struct{ h slog.Handler }

// slogLevel maps a zap level (Debug -1 … Fatal 5) onto slog's scale (Debug -4, Info 0, Warn 4,
// Error 8): slog spaces its named levels four apart.
func slogLevel(l zapcore.Level) slog.Level { return slog.Level(l) * 4 }

func (c slogCore) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), slogLevel(l))
}

func (c slogCore) With(fs []zapcore.Field) zapcore.Core {
	if len(fs) == 0 {
		return c
	}
	return slogCore{h: c.h.WithAttrs(attrs(nil, fs))}
}

func (c slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c slogCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	var pc uintptr
	if e.Caller.Defined {
		pc = e.Caller.PC
	}
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, pc)
	as := make([]slog.Attr, 0, len(fs)+2)
	if e.LoggerName != "" {
		as = append(as, slog.String("logger", e.LoggerName))
	}
	as = attrs(as, fs)
	if e.Stack != "" {
		as = append(as, slog.String("stack", e.Stack))
	}
	r.AddAttrs(as...)
	return c.h.Handle(context.Background(), r)
}

func (slogCore) Sync() error { return nil }

// attrs appends the fields to as, as slog attributes. The field types the library uses are
// converted directly; any other goes through zap's map encoder (one attribute per key it
// writes, in key order).
func attrs(as []slog.Attr, fs []zapcore.Field) []slog.Attr {
	for _, f := range fs {
		switch f.Type {
		case zapcore.StringType:
			as = append(as, slog.String(f.Key, f.String))
		case zapcore.Int64Type, zapcore.Int32Type, zapcore.Int16Type, zapcore.Int8Type:
			as = append(as, slog.Int64(f.Key, f.Integer))
		case zapcore.DurationType:
			as = append(as, slog.Duration(f.Key, time.Duration(f.Integer)))
		case zapcore.BoolType:
			as = append(as, slog.Bool(f.Key, f.Integer == 1))
		case zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok && err != nil {
				as = append(as, slog.String(f.Key, err.Error()))
			}
		case zapcore.SkipType:
		default:
			enc := zapcore.NewMapObjectEncoder()
			f.AddTo(enc)
			keys := make([]string, 0, len(enc.Fields))
			for k := range enc.Fields {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				as = append(as, slog.Any(k, enc.Fields[k]))
			}
		}
	}
	return as
}
