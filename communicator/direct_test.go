package communicator_test

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
)

// TestDirectPath: a lone caller on an idle net thread writes its own call (netthread's direct
// path) and gets its reply as any call does: sequential sync and async calls all succeed with
// their own replies, and the thread counts direct calls.
func TestDirectPath(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	c := newComm(t, func(cfg *conf.Config) { cfg.NetThread = 1 })
	sp := proxyTo(t, c, g)
	ctx := testCtx(t)

	direct := func() uint64 {
		var n uint64
		for _, th := range c.Stats().Threads {
			n += th.Direct
		}
		return n
	}
	// One call at a time: the thread is idle before each. The first connects (the call waits
	// for the connection, so the loop writes it); later ones find the connection ready. A call
	// whose caller woke before the loop let go of the thread goes through the loop: that is
	// allowed, so the test runs until some went direct (a liveness bound, not a count).
	const atLeast = 200
	var seq uint64
	for seq = 0; seq < atLeast || (direct() == 0 && seq < 20000); seq++ {
		if from, err := sayHello(ctx, sp, "direct", seq); err != nil || from != "a" {
			t.Fatalf("call %d: from %q, %v", seq, from, err)
		}
	}
	if direct() == 0 {
		t.Fatalf("none of %d sequential calls on an idle thread took the direct path", seq)
	}
	t.Logf("%d of %d sequential sync calls went direct", direct(), seq)

	// Async calls, one at a time, on the same path.
	for i := range 100 {
		done, err := asyncHello(t, ctx, sp, "async", uint64(i))
		if err != nil {
			t.Fatalf("async call %d: %v", i, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("async call %d: %v", i, err)
		}
	}
}

// TestDirectWriteRestInOrder: one-way calls leave the thread idle as soon as they are written,
// so each goes direct until the server stops reading and the socket fills: a direct write is
// then cut short, its rest handed to the loop, and the calls after it queue behind it. When the
// server reads again, every frame arrives whole and in order.
func TestDirectWriteRestInOrder(t *testing.T) {
	const (
		calls = 400
		size  = 48 << 10 // under the direct path's largest frame; 400 of them (19 MiB) fill any loopback socket pair
	)
	read := make(chan struct{})
	got := make(chan []uint32, 1)
	ln := listenLoopback(t)
	serveRaw(t, ln, func(_ int64, nc net.Conn) {
		<-read
		fr := codec.NewFrameReader(nc, 0)
		var seqs []uint32
		var req codec.RequestPacket
		for len(seqs) < calls {
			frame, err := fr.Next()
			if err != nil {
				t.Errorf("after %d frames: %v", len(seqs), err)
				break
			}
			if err := codec.DecodeRequest(frame, &req); err != nil {
				t.Errorf("frame %d: %v", len(seqs), err)
				break
			}
			if len(req.Buffer) != size {
				t.Errorf("frame %d: body of %d bytes, want %d", len(seqs), len(req.Buffer), size)
				break
			}
			seqs = append(seqs, binary.BigEndian.Uint32(req.Buffer))
		}
		got <- seqs
	})
	c := newComm(t, func(cfg *conf.Config) { cfg.NetThread = 1 })
	sp := proxyToAddrs(t, c, tcpEndpoint(ln.Addr().String()))
	ctx := testCtx(t)
	body := make([]byte, size)
	for i := range calls {
		binary.BigEndian.PutUint32(body, uint32(i))
		for j := 4; j < size; j++ {
			body[j] = byte(i + j)
		}
		if err := sp.InvokeOnewayRaw(ctx, "echo", body); err != nil {
			t.Fatalf("one-way call %d: %v", i, err)
		}
	}
	close(read)
	seqs := <-got
	if len(seqs) != calls {
		t.Fatalf("server read %d frames, want %d", len(seqs), calls)
	}
	for i, s := range seqs {
		if s != uint32(i) {
			t.Fatalf("frame %d carries call %d: out of order", i, s)
		}
	}
	var direct uint64
	for _, th := range c.Stats().Threads {
		direct += th.Direct
	}
	if direct == 0 {
		t.Errorf("no one-way call went direct")
	}
	t.Logf("%d of %d one-way calls went direct", direct, calls)
}
