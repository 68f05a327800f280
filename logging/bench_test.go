package logging_test

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/logging"
)

// BenchmarkDebugOff measures a Debug line below the level, as the library writes them on its
// paths (fields built at the call site): through zap's own core and through the slog bridge.
func BenchmarkDebugOff(b *testing.B) {
	err := errors.New("x")
	for _, bc := range []struct {
		name string
		log  *zap.Logger
	}{
		{"zap", zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.WarnLevel))},
		{"slog", logging.FromSlog(slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))},
	} {
		log := bc.log.With(zap.String("servant", "A.B.CObj"))
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				log.Debug("closing connection", zap.Error(err), zap.Int("consecutive", 3))
			}
		})
	}
}
