package logging

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// DefaultLevel is the level of Default when level names none: warn, so that the library says
// nothing until something is wrong.
const DefaultLevel = zapcore.WarnLevel

// Default returns the logger of a Communicator or Server given none: JSON lines on standard
// error, named "tarscomm", from level up (debug, info, warn or error, the values of the TOML key
// log-level); an empty or unknown level is DefaultLevel.
func Default(level string) *zap.Logger {
	l := DefaultLevel
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			l = DefaultLevel
		}
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), l)).Named("tarscomm")
}
