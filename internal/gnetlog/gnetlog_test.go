package gnetlog_test

import (
	"strings"
	"testing"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/internal/gnetlog"
)

// TestMain checks that no test leaves a goroutine behind (gnet's process-wide worker pool aside).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// TestLevels checks where each gnet level goes: Debug and Info to Debug, Warn to Warn (but gnet's
// stale-connection warning, to Debug), Error and Fatal to Error, all under the name "gnet".
func TestLevels(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := gnetlog.New(zap.New(core))
	l.Debugf("d %d", 1)
	l.Infof("i %d", 2)
	l.Warnf("w %d", 3)
	// gnet's own format (reactor_default.go), an event for a connection it closed: Debug.
	l.Warnf("received event[fd=%d|ev=%d|flags=%d] of a stale connection from event-loop(%d)", 9, 25, 0, 1)
	l.Errorf("e %d", 4)
	l.Fatalf("f %d", 5)
	want := []struct {
		msg   string
		level zapcore.Level
	}{{"d 1", zapcore.DebugLevel}, {"i 2", zapcore.DebugLevel}, {"w 3", zapcore.WarnLevel},
		{"received event[fd=9|ev=25|flags=0] of a stale connection from event-loop(1)", zapcore.DebugLevel},
		{"e 4", zapcore.ErrorLevel}, {"f 5", zapcore.ErrorLevel}}
	got := logs.All()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Message != w.msg || got[i].Level != w.level || got[i].LoggerName != "gnet" {
			t.Errorf("entry %d = %q at %v from %q, want %q at %v from gnet", i, got[i].Message, got[i].Level, got[i].LoggerName, w.msg, w.level)
		}
	}
}

type handler struct{ gnet.BuiltinEventEngine }

// TestNoLevelLine starts and stops a gnet client logging through the adapter at debug level and
// checks that gnet's "default logging level is INFO" (the level of gnet's own logger, not in use)
// does not appear, while gnet's start line does.
func TestNoLevelLine(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	cli, err := gnet.NewClient(&handler{}, gnet.WithLogger(gnetlog.New(zap.New(core))))
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cli.Stop(); err != nil {
		t.Fatal(err)
	}
	started := false
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "default logging level") {
			t.Errorf("gnet's level line was logged: %q", e.Message)
		}
		started = started || strings.Contains(e.Message, "Starting gnet client")
	}
	if !started {
		t.Fatalf("gnet's start line was not logged through the adapter: %v", logs.All())
	}
}
