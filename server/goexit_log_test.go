package server

import (
	"context"
	"runtime"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/codec"
)

// TestGoexitStormLogBounded: a handler (served by workers) that ends its goroutine on
// a request a client can send again and again is the panicking handler's twin: the server
// answers it RetUnknown and goes on. A panic is logged once a second per function at most
// (server/doc.go, docs/ARCHITECTURE.md); the Goexit line was not limited at all before, so a
// client repeating the request wrote one Error line, unbounded, per call.
func TestGoexitStormLogBounded(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "quit", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			runtime.Goexit()
			return nil, nil
		})
	}, WithWorkers(2), WithLogger(zap.New(core)))

	const calls = 300
	c := dial(t, addr)
	start := time.Now()
	for i := 1; i <= calls; i++ {
		c.write(codec.AppendRequest(nil, request(int32(i), "App.S.Obj", "quit", nil)))
		if rsp := c.recv(); rsp.Ret != codec.RetUnknown {
			t.Fatalf("call %d: ret %d, want RetUnknown", i, rsp.Ret)
		}
	}
	secs := int(time.Since(start)/time.Second) + 1
	n := logs.Len()
	if max := 2 * (secs + 1); n > max {
		e := logs.All()[0]
		t.Fatalf("%d calls in ~%ds wrote %d lines at Info or above (want at most %d, as for a panicking handler); first: %s %q %v",
			calls, secs, n, max, e.Level, e.Message, e.ContextMap())
	}
}
