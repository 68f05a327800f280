package server

import (
	"math"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestHugeQueueTimeout: WithQueueTimeout with a very long duration (the largest
// time.Duration, a natural "never" for a caller who does not know that d <= 0 means that) must
// run every request that waited less than it. A request that carries no client timeout
// (iTimeout 0, or negative: "none" for the handler's ctx) must then run, as it does with
// WithQueueTimeout(time.Hour): a longer bound never refuses more. Before, the due time
// overflowed (queued + d) and every such request was answered -6.
func TestHugeQueueTimeout(t *testing.T) {
	for _, queue := range []time.Duration{time.Hour, math.MaxInt64} {
		t.Run(queue.String(), func(t *testing.T) {
			leakCheck(t)
			_, addr := startServer(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "Echo", echo) },
				WithWorkers(1), WithQueueTimeout(queue))
			c := dial(t, addr)
			for i, to := range []int32{60000, 0, -1} {
				r := request(int32(i+1), "App.S.Obj", "Echo", []byte{byte('a' + i)})
				r.Timeout = to
				rsp := c.call(r)
				if rsp.Ret != codec.RetOK || string(rsp.Buffer) != string(rune('a'+i)) {
					t.Errorf("WithQueueTimeout(%v), request with iTimeout %d that waited for no one: ret %d %q, want it run (ret 0, body %q)",
						queue, to, rsp.Ret, rsp.ResultDesc, string(rune('a'+i)))
				}
			}
		})
	}
}
