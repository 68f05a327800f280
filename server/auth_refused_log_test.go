package server

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/auth"
)

// TestAuthRefusedStormLogBounded: a fleet of clients holding an old secret (a key
// rotation) connects again and again; each connection is refused. The project promises that
// nothing per call is logged above Debug and that lines a peer can repeat at will are limited
// (internal/lograte, as the handler panics and the client's endpoint warnings are). 300 refused
// connections within a few seconds must not write 300 lines at Info (before, they wrote 300).
func TestAuthRefusedStormLogBounded(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	keys := func(ak string) (string, bool) { return "sk", ak == "ak" }
	_, addr := startServer(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "echo", echo) },
		WithAuth(keys), WithLogger(zap.New(core)))

	const conns = 300
	start := time.Now()
	for i := 0; i < conns; i++ {
		c := dial(t, addr)
		f, err := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "old-secret"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c.write(f)
		if _, err := c.readFrame(testTimeout); err == nil {
			t.Fatal("a wrong secret was answered")
		}
		_ = c.c.Close()
	}
	secs := int(time.Since(start)/time.Second) + 1
	// Let the last refusals be logged.
	time.Sleep(100 * time.Millisecond)
	n := logs.Len()
	// Once a second at most, plus one: generous.
	if max := 2 * (secs + 1); n > max {
		e := logs.All()[0]
		t.Fatalf("%d refused connections in ~%ds wrote %d lines at Info or above (want at most %d); first: %s %q %v",
			conns, secs, n, max, e.Level, e.Message, e.ContextMap())
	}
}
