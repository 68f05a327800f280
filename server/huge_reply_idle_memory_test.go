package server

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestHugeReplyScratchNotKeptWhileIdle: after one huge reply, a server that goes idle must not keep a buffer of that
// size for good. conn.go's maxKeptBuffer says "larger buffers are dropped after use instead of
// kept", and what the server does keep of large buffers goes to bufpool, which bounds what it
// keeps (64 MiB in all, no buffer that does not fit) and gives it back while idle. A reply of
// 80 MiB fits nowhere in bufpool, so once it is written and the client is gone, the heap must
// come back to where it was. Before, it did not (about 160 MiB stayed): the loop's (or worker's) reply scratch is regrown to
// the reply's size for the next handler and shrinks only after 16 smaller replies (replies.go,
// scratch.next), and the loop's (worker's) ResponsePacket keeps pointing at the handler's body
// until the next reply (fillResponse): twice the reply, held while the server is idle. Now a
// loop or worker waiting for work parks a large scratch in bufpool (scratch.park) and the
// ResponsePacket keeps no reference once encoded.
func TestHugeReplyScratchNotKeptWhileIdle(t *testing.T) {
	const size = 80 << 20
	for _, m := range []struct {
		name string
		opts []Option
	}{
		{name: "inline", opts: []Option{WithWorkers(0)}},
		{name: "workers", opts: []Option{WithWorkers(1)}},
	} {
		t.Run(m.name, func(t *testing.T) {
			opts := append([]Option{WithNumEventLoop(1), WithMaxPacketSize(size + 1<<20)}, m.opts...)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, tarsServant, "small", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, "ok"...), nil
				})
				mustHandle(t, s, tarsServant, "huge", func(_ context.Context, _ *Current, _, _ []byte) ([]byte, error) {
					return make([]byte, size), nil // a body the handler made itself, as a marshaller does
				})
			}, opts...)

			// Warm up with a small call, so what the server keeps for any reply is in the baseline.
			c := dial(t, addr)
			c.fr = codec.NewFrameReader(c.c, size+1<<20)
			if rsp := c.call(request(1, tarsServant, "small", nil)); rsp.Ret != 0 {
				t.Fatalf("small call: ret %d %q", rsp.Ret, rsp.ResultDesc)
			}
			base := heapAfterGC()

			// 80 MiB takes its time under the race detector (16 s on a quiet 2-core machine whose
			// page faults are slow): two minutes bound the reply.
			c.write(codec.AppendRequest(nil, request(2, tarsServant, "huge", nil)))
			f, err := c.readFrame(2 * time.Minute)
			if err != nil {
				t.Fatalf("huge call: %v", err)
			}
			rsp := new(codec.ResponsePacket)
			if err := codec.DecodeResponse(f, rsp); err != nil {
				t.Fatal(err)
			}
			if rsp.Ret != 0 || len(rsp.Buffer) != size {
				t.Fatalf("huge call: ret %d, %d bytes, want 0 and %d", rsp.Ret, len(rsp.Buffer), size)
			}
			rsp = nil
			_ = c.c.Close()
			c.fr = nil
			time.Sleep(200 * time.Millisecond) // the server sees the close

			after := heapAfterGC()
			grown := int64(after) - int64(base)
			t.Logf("heap in use: %d MiB before the huge reply, %d MiB once idle", base>>20, after>>20)
			if grown > size/2 {
				t.Fatalf("once idle after one reply of %d MiB (client gone), the server still holds %d MiB more heap than before it; "+
					"want it back: a buffer above maxKeptBuffer is dropped after use, and bufpool keeps none of that size",
					size>>20, grown>>20)
			}
		})
	}
}

// heapAfterGC is the heap in use after the collector has run enough for sync.Pools to be empty.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	for range 4 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
