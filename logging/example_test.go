package logging_test

import (
	"errors"
	"log/slog"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/logging"
)

// A *slog.Logger as the library's logger: what its handler enables is written, with the
// library's keys. (communicator.WithSlog does this for a Communicator.)
func ExampleFromSlog() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // no time, for the example's output
			}
			return a
		},
	})
	log := logging.FromSlog(slog.New(h)).Named("registry")
	log.Debug("not written: below the handler's level")
	log.Warn("registry query failed; keeping the last list", zap.String("servant", "Hello.Server.GreeterObj"),
		zap.Int("consecutive", 2), zap.Duration("retry_in", 2*time.Second), zap.Error(errors.New("timeout")))
	// Output:
	// level=WARN msg="registry query failed; keeping the last list" logger=registry servant=Hello.Server.GreeterObj consecutive=2 retry_in=2s error=timeout
}
