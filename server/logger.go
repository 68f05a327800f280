package server

import "go.uber.org/zap"

// gnetLogger adapts a zap logger to gnet's logging.Logger, so that gnet logs through ours
// instead of its own stdout logger. Fatalf logs at Error: library code never exits.
type gnetLogger struct {
	l *zap.SugaredLogger
}

func (g gnetLogger) Debugf(format string, args ...any) { g.l.Debugf(format, args...) }
func (g gnetLogger) Infof(format string, args ...any)  { g.l.Infof(format, args...) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.l.Warnf(format, args...) }
func (g gnetLogger) Errorf(format string, args ...any) { g.l.Errorf(format, args...) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.l.Errorf(format, args...) }
