package communicator_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestFaultsKeepAliveSlowDownload (a guard, passed when written) echoes large bodies over a link throttled toward the
// client, with keep-alive-interval 200ms: the reply arrives slowly but steadily (a piece every
// 10ms), so keepalive must not close the connection; the call succeeds on the one connection.
// (A guard: passes. The fault suite throttles a download only without keepalive. Throttling the
// upload through faultproxy is no test of this: the proxy and the kernel's loopback buffers
// take a whole 6 MiB request at once, and the client then rightly sees no progress.)
func TestFaultsKeepAliveSlowDownload(t *testing.T) {
	for _, tt := range []struct {
		name string
		dir  faultproxy.Direction
		size int
		rate int
	}{
		{"down", faultproxy.Down, 2 << 20, 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			endToEnd(t)
			// Handlers on workers: the server's loop answers the keepalive's ping while the echo
			// of 2 MiB is decoded and encoded (inline, under -race on a slow machine, that held
			// the loop past the ping's deadline: the server, not the link, was silent).
			e := startEchoServer(t, true, server.WithWorkers(2))
			p := startProxy(t, e.addr)
			comm := newComm(t, func(c *conf.Config) {
				largeConf(c)
				c.KeepAliveInterval = keepAlive
			})
			sp := objProxy(t, comm, largeServant, tcpEndpoint(p.Addr()))
			ctx := testCtx(t)
			if err := sp.Invoke(ctx, "Echo", wrapperspb.Bytes([]byte("warm")), new(wrapperspb.BytesValue)); err != nil {
				t.Fatal(err)
			}
			p.Throttle(tt.dir, tt.rate)
			want := payload(tt.size, 3)
			rsp := new(wrapperspb.BytesValue)
			start := time.Now()
			if err := sp.Invoke(ctx, "Echo", wrapperspb.Bytes(want), rsp); err != nil {
				t.Fatalf("%d bytes over a link throttled %v to %d B/s, keepalive %v: %v after %v; want success (the link moves steadily)", tt.size, tt.dir, tt.rate, keepAlive, err, time.Since(start))
			}
			if err := sameBytes(rsp.GetValue(), want); err != nil {
				t.Fatal(err)
			}
			t.Logf("took %v", time.Since(start))
			if got := p.Stats().Accepts; got != 1 {
				t.Errorf("proxy accepted %d connections, want 1", got)
			}
		})
	}
}
