package server

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestUnroutedHugeRequestNotKeptWhileIdle: one huge request (80 MiB, more than
// bufpool keeps, so its buffer is the garbage collector's once given back) for a function the
// server does not serve is answered with an error; the server then goes idle. The request's
// memory must come back, as it does for a request a handler served (TestHugeReplyScratchNotKeptWhileIdle
// shows the server cares: a loop that waits for work holds no large buffer). Before, in inline
// mode it did not: the loop's RequestPacket (loop.req) still pointed into the frame, and kept it
// until the loop's next request, which an idle server never gets. "served" is the control.
func TestUnroutedHugeRequestNotKeptWhileIdle(t *testing.T) {
	const size = 80 << 20
	for _, fn := range []string{"served", "nosuch"} {
		t.Run(fn, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, tarsServant, "served", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, "ok"...), nil
				})
			}, WithNumEventLoop(1), WithWorkers(0), WithMaxPacketSize(size+1<<20))

			c := dial(t, addr)
			if rsp := c.call(request(1, tarsServant, "served", nil)); rsp.Ret != 0 {
				t.Fatalf("small call: ret %d %q", rsp.Ret, rsp.ResultDesc)
			}
			base := heapAfterGC()

			func() {
				frame := codec.AppendRequest(nil, request(2, tarsServant, fn, make([]byte, size)))
				c.write(frame)
			}()
			f, err := c.readFrame(time.Minute)
			if err != nil {
				t.Fatalf("huge call: %v", err)
			}
			rsp := new(codec.ResponsePacket)
			if err := codec.DecodeResponse(f, rsp); err != nil {
				t.Fatal(err)
			}
			t.Logf("reply to %s: ret %d %q", fn, rsp.Ret, rsp.ResultDesc)
			rsp, f = nil, nil
			_ = c.c.Close() // the client is gone too
			c.fr = nil
			time.Sleep(200 * time.Millisecond) // the server sees the close

			after := heapAfterGC()
			grown := int64(after) - int64(base)
			t.Logf("heap in use: %d MiB before the huge request, %d MiB once idle", base>>20, after>>20)
			if grown > size/2 {
				t.Fatalf("once idle after one request of %d MiB to function %q, the server still holds %d MiB more heap than before it; "+
					"want it back (it fits nowhere in bufpool)", size>>20, fn, grown>>20)
			}
		})
	}
}
