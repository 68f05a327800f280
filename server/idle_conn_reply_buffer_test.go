package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestIdleConnKeepsNoReplyBuffer: a server holds many connections that are mostly idle.
// Each of 64 clients makes one call whose reply is 600 KiB (below maxKeptBuffer, 1 MiB) and then
// stays connected and idle. Once the replies are written, what the server keeps for an idle
// connection must not be reply-sized: ARCHITECTURE.md ("The server") says "an idle server holds
// no reply-sized buffer", and TarsCpp's connection send buffer (TC_NetWorkBuffer) frees what it
// sent. With workers (WithWorkers(n)), and for pushes in any mode, the connection's reply buffer
// (conn.spare, conn.go's flush of worker replies) was kept per connection at the size of its
// largest batch up to 1 MiB, for as long as the connection lives: an idle server with thousands
// of connections pins up to 1 MiB each (the inline loop keeps one buffer per loop, not per
// connection). The bound asserted is 128 KiB per connection (inline mode grows ~17 KiB). Before,
// each idle connection held ~667 KiB; the flush now keeps at most 64 KiB (replies.park).
func TestIdleConnKeepsNoReplyBuffer(t *testing.T) {
	const size = 600 << 10
	const n = 64
	for _, m := range []struct {
		name string
		push bool
		opts []Option
	}{
		{name: "workers", opts: []Option{WithWorkers(2)}},
		{name: "inline-push", push: true, opts: []Option{WithWorkers(0)}},
	} {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			var (
				mu      sync.Mutex
				pushers []*Pusher
			)
			opts := append([]Option{WithNumEventLoop(1)}, m.opts...)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, tarsServant, "small", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
					mu.Lock()
					pushers = append(pushers, cur.Pusher())
					mu.Unlock()
					return append(rsp, "ok"...), nil
				})
				mustHandle(t, s, tarsServant, "big", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, make([]byte, size)...), nil
				})
			}, opts...)
			cs := make([]*client, n)
			for i := range cs {
				cs[i] = dial(t, addr)
				cs[i].fr = codec.NewFrameReader(cs[i].c, 4<<20)
				if rsp := cs[i].call(request(1, tarsServant, "small", nil)); rsp.Ret != 0 {
					t.Fatalf("small call %d: ret %d", i, rsp.Ret)
				}
			}
			time.Sleep(100 * time.Millisecond)
			base := heapAfterGC()
			for i := range cs {
				if m.push {
					mu.Lock()
					p := pushers[i]
					mu.Unlock()
					if err := p.Push("Big", make([]byte, size)); err != nil {
						t.Fatalf("push %d: %v", i, err)
					}
					f, err := cs[i].readFrame(testTimeout)
					if err != nil || len(f) < size {
						t.Fatalf("push %d: %d bytes, %v; want a frame of over %d bytes", i, len(f), err, size)
					}
					continue
				}
				if rsp := cs[i].call(request(2, tarsServant, "big", nil)); rsp.Ret != 0 || len(rsp.Buffer) != size {
					t.Fatalf("big call %d: ret %d, %d bytes; want 0 and %d", i, rsp.Ret, len(rsp.Buffer), size)
				}
			}
			time.Sleep(300 * time.Millisecond) // idle: every reply written and read
			grew := int64(heapAfterGC()) - int64(base)
			per := grew / n
			t.Logf("%s: heap grew %d KiB over %d idle connections after one %d KiB reply each: %d KiB per connection", m.name, grew>>10, n, size>>10, per>>10)
			if per > 128<<10 {
				t.Errorf("%s: each idle connection still holds %d KiB after its one %d KiB reply was written and read "+
					"(%d KiB for %d connections); want no reply-sized buffer per idle connection (at most 128 KiB each)",
					m.name, per>>10, size>>10, grew>>10, n)
			}
		})
	}
}
