package logging_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/logging"
)

// lines decodes the JSON lines a slog.JSONHandler wrote.
func lines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestFromSlog checks that an entry reaches the slog handler with its level, message, logger
// name, the fields given to With and to the call, and the caller's source.
func TestFromSlog(t *testing.T) {
	var b bytes.Buffer
	h := slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug, AddSource: true})
	log := logging.FromSlog(slog.New(h)).Named("tarscomm").With(zap.String("servant", "A.B.CObj"))
	log.Warn("connect failed", zap.Error(errors.New("refused")), zap.Int("consecutive", 3),
		zap.Duration("retry_in", 1500*time.Millisecond), zap.Int32("port", 7), zap.Bool("ok", true),
		zap.Stringer("state", zapcore.WarnLevel), zap.Strings("list", []string{"x", "y"}))
	got := lines(t, &b)
	if len(got) != 1 {
		t.Fatalf("%d lines, want 1: %s", len(got), b.String())
	}
	m := got[0]
	want := map[string]any{
		"level": "WARN", "msg": "connect failed", "logger": "tarscomm", "servant": "A.B.CObj",
		"error": "refused", "consecutive": 3.0, "retry_in": float64(1500 * time.Millisecond),
		"port": 7.0, "ok": true, "state": "warn",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v (%T), want %v", k, m[k], m[k], v)
		}
	}
	if l, ok := m["list"].([]any); !ok || len(l) != 2 || l[0] != "x" || l[1] != "y" {
		t.Errorf("list = %v, want [x y]", m["list"])
	}
	src, _ := m["source"].(map[string]any)
	if f, _ := src["file"].(string); !strings.HasSuffix(f, "slog_test.go") {
		t.Errorf("source = %v, want this file", m["source"])
	}
}

// TestFromSlogLevels checks the level mapping and that the handler's level decides what is
// written.
func TestFromSlogLevels(t *testing.T) {
	for _, tc := range []struct {
		handler slog.Level
		on, off zapcore.Level
		name    string
	}{
		{slog.LevelDebug, zapcore.DebugLevel, zapcore.DebugLevel - 1, "DEBUG"},
		{slog.LevelInfo, zapcore.InfoLevel, zapcore.DebugLevel, "INFO"},
		{slog.LevelWarn, zapcore.WarnLevel, zapcore.InfoLevel, "WARN"},
		{slog.LevelError, zapcore.ErrorLevel, zapcore.WarnLevel, "ERROR"},
	} {
		var b bytes.Buffer
		log := logging.FromSlog(slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: tc.handler})))
		if !log.Core().Enabled(tc.on) || log.Core().Enabled(tc.off) {
			t.Errorf("handler at %v: zap %v enabled %v, zap %v enabled %v", tc.handler, tc.on, log.Core().Enabled(tc.on), tc.off, log.Core().Enabled(tc.off))
		}
		log.Log(tc.off, "dropped")
		log.Log(tc.on, "kept")
		got := lines(t, &b)
		if len(got) != 1 || got[0]["msg"] != "kept" || got[0]["level"] != tc.name {
			t.Errorf("handler at %v wrote %s, want one %s line", tc.handler, b.String(), tc.name)
		}
	}
}

// TestDefaultLevel checks the level of the default logger: warn unless log-level says otherwise.
func TestDefaultLevel(t *testing.T) {
	for _, tc := range []struct {
		level   string
		on, off zapcore.Level
	}{
		{"", zapcore.WarnLevel, zapcore.InfoLevel},
		{"nonsense", zapcore.WarnLevel, zapcore.InfoLevel},
		{"debug", zapcore.DebugLevel, zapcore.DebugLevel - 1},
		{"info", zapcore.InfoLevel, zapcore.DebugLevel},
		{"warn", zapcore.WarnLevel, zapcore.InfoLevel},
		{"error", zapcore.ErrorLevel, zapcore.WarnLevel},
	} {
		core := logging.Default(tc.level).Core()
		if !core.Enabled(tc.on) || core.Enabled(tc.off) {
			t.Errorf("Default(%q): %v enabled %v, %v enabled %v", tc.level, tc.on, core.Enabled(tc.on), tc.off, core.Enabled(tc.off))
		}
	}
}
