// Package gnetlog adapts a *zap.Logger to gnet's logging.Logger, so that gnet logs through the
// logger the user injected instead of installing its own process-wide default.
package gnetlog

import (
	"strings"

	"github.com/panjf2000/gnet/v2/pkg/logging"
	"go.uber.org/zap"
)

// New returns a gnet logger writing to log (named "gnet"). gnet's Info lines (an engine or
// client starting, a loop exiting) are its own bookkeeping and go to Debug, so that a
// Communicator at the default log-level says nothing while all is well; gnet's Fatalf is
// logged at error level: library code never exits the process. gnet's "default logging level is
// INFO" line, which it writes at every engine or client start, is dropped: it names the level of
// gnet's own built-in logger, which is not in use, and would contradict a log-level of debug.
// gnet's warning of an event for a stale connection goes to Debug too: a socket whose write
// failed in a loop turn is closed at once, and its reset in the same batch of events then finds
// no connection (harmless: the descriptor is removed from epoll); each comes with the
// connection's own "connection lost" line, and under network faults they came 2-3 a second.
func New(log *zap.Logger) logging.Logger {
	if log == nil {
		log = zap.NewNop()
	}
	return logger{log.Named("gnet").Sugar()}
}

type logger struct{ s *zap.SugaredLogger }

// gnetLevelLine is the format of gnet's line about its built-in logger's level.
const gnetLevelLine = "default logging level is %s"

// gnetStaleLine ends the format of gnet's warning of an event for a connection it has closed.
const gnetStaleLine = "of a stale connection from event-loop(%d)"

func (l logger) Debugf(format string, args ...any) {
	if format == gnetLevelLine {
		return
	}
	l.s.Debugf(format, args...)
}
func (l logger) Infof(format string, args ...any) { l.s.Debugf(format, args...) }
func (l logger) Warnf(format string, args ...any) {
	if strings.HasSuffix(format, gnetStaleLine) {
		l.s.Debugf(format, args...)
		return
	}
	l.s.Warnf(format, args...)
}
func (l logger) Errorf(format string, args ...any) { l.s.Errorf(format, args...) }
func (l logger) Fatalf(format string, args ...any) { l.s.Errorf(format, args...) }
