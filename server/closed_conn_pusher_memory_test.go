package server

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestClosedConnKeptPusherHoldsNoBuffer: a push server keeps a Pusher per subscriber, and some
// keep it after the subscriber left (a registry of subscribers pruned lazily, by Closed or by
// Push's ErrConnClosed). A closed connection must then hold no reply buffer through its kept
// Pusher: before, OnClose left the connection's spare reply buffer (up to 64 KiB, what the flush
// keeps for a busy connection's next batch) and a flush after the close kept the dropped
// replies' buffer as the spare again, so 64 closed connections with a 40 KiB push each held
// 3.2 MiB for as long as their Pushers were kept (0.1 MiB now: the conns themselves).
func TestClosedConnKeptPusherHoldsNoBuffer(t *testing.T) {
	const size = 40 << 10
	const n = 64
	for _, m := range []struct {
		name string
		opts []Option
	}{
		{name: "workers", opts: []Option{WithWorkers(2)}},
		{name: "inline", opts: []Option{WithWorkers(0)}},
	} {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			var (
				mu      sync.Mutex
				pushers []*Pusher
			)
			opts := append([]Option{WithNumEventLoop(1)}, m.opts...)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, tarsServant, "subscribe", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
					mu.Lock()
					pushers = append(pushers, cur.Pusher())
					mu.Unlock()
					return append(rsp, "ok"...), nil
				})
			}, opts...)
			base := heapAfterGC()
			cs := make([]*client, n)
			for i := range cs {
				cs[i] = dial(t, addr)
				cs[i].fr = codec.NewFrameReader(cs[i].c, 4<<20)
				if rsp := cs[i].call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
					t.Fatalf("subscribe %d: ret %d", i, rsp.Ret)
				}
			}
			mu.Lock()
			kept := append([]*Pusher(nil), pushers...)
			mu.Unlock()
			if len(kept) != n {
				t.Fatalf("%d pushers, want %d", len(kept), n)
			}
			for i, p := range kept {
				if err := p.Push("Feed", make([]byte, size)); err != nil {
					t.Fatalf("push %d: %v", i, err)
				}
				if f, err := cs[i].readFrame(testTimeout); err != nil || len(f) < size {
					t.Fatalf("push %d: %d bytes, %v; want a frame of over %d bytes", i, len(f), err, size)
				}
			}
			for i, c := range cs {
				_ = c.c.Close()
				cs[i] = nil // its frame reader's buffer is the test's, not the server's
			}
			eventually(t, "every connection closed on the server", func() bool {
				for _, p := range kept {
					if !p.Closed() {
						return false
					}
				}
				return true
			})
			grew := int64(heapAfterGC()) - int64(base)
			t.Logf("%s: heap grew %d KiB with %d closed connections' Pushers kept", m.name, grew>>10, n)
			if per := grew / n; per > 8<<10 {
				t.Errorf("%s: each closed connection whose Pusher is kept holds %d KiB (%d KiB for %d); "+
					"want no reply buffer (at most 8 KiB each)", m.name, per>>10, grew>>10, n)
			}
			runtime.KeepAlive(kept)
		})
	}
}
