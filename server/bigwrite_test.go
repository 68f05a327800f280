package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// bigBody returns n bytes of a pattern that differs for each tag, so that a reply carrying the
// wrong body, or bytes out of order, shows.
func bigBody(n int, tag byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ tag
	}
	return b
}

// TestLargeRepliesInOrderToSlowReader: replies of megabytes to a reader that lets the socket
// fill are finished by writer goroutines, and every reply pipelined behind them (small and
// large) arrives whole on the same connection: in request order from an inline server, in
// completion order with workers.
func TestLargeRepliesInOrderToSlowReader(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []Option
	}{{"inline", nil}, {"workers", []Option{WithWorkers(2)}}} {
		t.Run(mode.name, func(t *testing.T) {
			opts := append([]Option{WithMaxPacketSize(64 << 20)}, mode.opts...)
			s, addr := startServer(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "echo", echo) }, opts...)
			c := dial(t, addr)
			c.fr = codec.NewFrameReader(c.c, 64<<20)
			sizes := []int{8 << 20, 100, 3 << 20, 10, 2 << 20}
			var frames []byte
			for i, n := range sizes {
				frames = codec.AppendRequest(frames, request(int32(i+1), "App.S.Obj", "echo", bigBody(n, byte(i))))
			}
			go func() { _, _ = c.c.Write(frames) }() // the server answers while we do not read yet
			time.Sleep(200 * time.Millisecond)       // let the replies fill the socket: the writer path
			seen := map[int32]bool{}
			for k := range sizes {
				rsp := recvLarge(t, c)
				i := int(rsp.RequestID) - 1
				if i < 0 || i >= len(sizes) || seen[rsp.RequestID] || rsp.Ret != 0 {
					t.Fatalf("reply %d: id %d ret %d (seen %v)", k, rsp.RequestID, rsp.Ret, seen)
				}
				if mode.opts == nil && i != k {
					t.Fatalf("inline server: reply %d answers request %d, want replies in request order", k, i)
				}
				seen[rsp.RequestID] = true
				if !bytes.Equal(rsp.Buffer, bigBody(sizes[i], byte(i))) {
					t.Fatalf("reply to id %d: body of %d bytes differs from the %d sent", rsp.RequestID, len(rsp.Buffer), sizes[i])
				}
			}
			if s.bigStarted.Load() == 0 {
				t.Fatal("no large reply was finished by a writer goroutine: the test did not reach that path")
			}
		})
	}
}

// recvLarge reads and decodes the next response, saying what went wrong without dumping
// megabytes.
func recvLarge(t *testing.T, c *client) *codec.ResponsePacket {
	t.Helper()
	f, err := c.readFrame(largeTimeout)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	rsp := new(codec.ResponsePacket)
	if err := codec.DecodeResponse(f, rsp); err != nil {
		t.Fatalf("decode a response of %d bytes: %v", len(f), err)
	}
	return rsp
}

// TestLargeReplyPeerGone: a peer that asks for a large reply and closes without reading it, or
// never reads it, does not hold Stop: the writers stop with their connections and no goroutine
// is left (TestMain checks).
func TestLargeReplyPeerGone(t *testing.T) {
	s := New(WithMaxPacketSize(64<<20), WithWorkers(1))
	stopOnCleanup(t, s) // if the test fails before its Stop: no goroutine left to fail the next tests' leak checks
	mustHandle(t, s, "App.S.Obj", "echo", echo)
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := bigBody(16<<20, 1)
	req := codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", body))
	closer := dial(t, a.String())
	staller := dial(t, a.String())
	closer.write(req)
	staller.write(req)
	deadline := time.Now().Add(largeTimeout) // two 16 MiB echoes under -race on a busy machine
	for s.bigStarted.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d large replies handed to writers after %v, want 2", s.bigStarted.Load(), largeTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = closer.c.Close()
	// staller never reads: Stop waits for its reply until its deadline, then closes it.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with a reply the peer never reads: %v, want the deadline", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), testTimeout)
	defer cancel2()
	if err := s.Stop(ctx2); err != nil {
		t.Fatalf("second Stop: %v (after %v)", err, time.Since(start))
	}
	// The staller sees its connection end (reset or EOF) once it reads.
	_ = staller.c.SetReadDeadline(time.Now().Add(testTimeout))
	_, err = staller.c.Read(make([]byte, 1))
	var ne net.Error
	for err == nil {
		_, err = staller.c.Read(make([]byte, 1<<20))
	}
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the staller's connection is still open after Stop: %v", err)
	}
}

// BenchmarkLargeEcho measures the server's bytes and allocations per large echo over loopback.
func BenchmarkLargeEcho(b *testing.B) {
	for _, n := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dMiB", n>>20), func(b *testing.B) {
			_, addr := startServer(b, func(s *Server) {
				if err := s.Handle("App.S.Obj", "echo", echo); err != nil {
					b.Fatal(err)
				}
			}, WithMaxPacketSize(64<<20))
			c := dial(b, addr)
			c.fr = codec.NewFrameReader(c.c, 64<<20)
			req := codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", bigBody(n, 3)))
			b.SetBytes(int64(n))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				go func() { _, _ = c.c.Write(req) }()
				if _, err := c.readFrame(testTimeout); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
