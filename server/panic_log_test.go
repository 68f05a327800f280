package server

import (
	"context"
	"math"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/codec"
)

// TestPanicLogLimited: a handler that panics on every request is answered RetUnknown every time,
// and logged at most once a second (with its stack), each line saying how many panics it stands
// for since the one before: after 200 panics, a pause of more than a second and one more, the
// lines account for all 201. Before, each panic wrote a line with a stack: a client could make
// the server write as many as it sent requests.
func TestPanicLogLimited(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			core, logs := observer.New(zap.ErrorLevel)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Boom", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
					panic("boom")
				})
			}, append(m.opts, WithLogger(zap.New(core)))...)
			c := dial(t, addr)
			const calls = 200
			start := time.Now()
			for i := range calls + 1 {
				if i == calls {
					time.Sleep(1100 * time.Millisecond) // past the interval: the next is logged
				}
				if rsp := c.call(request(int32(i+1), pbServant, "Boom", nil)); rsp.Ret != codec.RetUnknown {
					t.Fatalf("call %d: ret %d, want %d", i, rsp.Ret, codec.RetUnknown)
				}
			}
			elapsed := time.Since(start)
			lines := logs.FilterMessageSnippet("handler panicked").All()
			stood := uint64(0)
			for i, l := range lines {
				stood++
				if n, ok := l.ContextMap()["suppressed"].(uint64); ok {
					stood += n
				}
				if _, ok := l.ContextMap()["stack"]; !ok {
					t.Errorf("line %d has no stack", i)
				}
			}
			if most := 1 + int(math.Ceil(elapsed.Seconds())); len(lines) < 2 || len(lines) > most {
				t.Errorf("%d panics in %v logged in %d lines, want 2 to %d (one a second at most)", calls+1, elapsed.Round(time.Millisecond), len(lines), most)
			}
			if stood != calls+1 {
				t.Errorf("the %d lines stand for %d panics (1 each, plus their suppressed), want %d", len(lines), stood, calls+1)
			}
		})
	}
}
