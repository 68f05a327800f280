package server

import (
	"bytes"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestLargeBodiesFromScratch: reply bodies of megabytes that handlers make in the scratch handed
// to them are written from there (taken over, not copied), pipelined with small replies around
// them, to a reader that lets the socket fill (writer goroutines finish them) and to one that
// reads at once: every reply arrives whole and in request order, from an inline server and from
// one worker.
func TestLargeBodiesFromScratch(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []Option
	}{{"inline", nil}, {"worker", []Option{WithWorkers(1)}}} {
		t.Run(mode.name, func(t *testing.T) {
			s, addr := startServer(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "echo", echo) },
				append([]Option{WithMaxPacketSize(64 << 20)}, mode.opts...)...)
			c := dial(t, addr)
			c.fr = codec.NewFrameReader(c.c, 64<<20)
			warmScratch(t, c)
			for _, slow := range []bool{true, false} {
				started := s.bigStarted.Load()
				pipelineLarge(t, s, c, slow)
				if slow && s.bigStarted.Load() == started {
					t.Fatal("no reply was finished by a writer goroutine: the test did not reach that path")
				}
			}
		})
	}
}

// TestLargeBodiesFromScratchTLS: the same over TLS, where the parts of a frame are encrypted
// where they are (LoopConn.Writev) and gnet keeps what the socket does not take.
func TestLargeBodiesFromScratchTLS(t *testing.T) {
	ts := newTLSSetup(t)
	s, addr, _ := startTLSServer(t, ts, false)
	c := dialTLS(t, addr, clientConfig(t, ts, nil))
	warmScratch(t, c)
	for _, slow := range []bool{true, false} {
		pipelineLarge(t, s, c, slow)
	}
}

// warmScratch makes one large call on c, so that the scratch of the loop or worker serving c is
// large enough for the bodies that follow: the first large body ever is copied.
func warmScratch(t *testing.T, c *client) {
	t.Helper()
	body := bigBody(8<<20, 0xee)
	c.write(codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", body)))
	if rsp := recvLarge(t, c); rsp.RequestID != 1 || !bytes.Equal(rsp.Buffer, body) {
		t.Fatalf("warm-up reply: id %d, %d bytes", rsp.RequestID, len(rsp.Buffer))
	}
}

// pipelineLarge writes large and small requests in one go on c and checks that each reply is
// the echo of its request, in request order, and that the large bodies were taken over from
// the handler's scratch. A slow reader reads only once the server had time to fill the socket.
func pipelineLarge(t *testing.T, s *Server, c *client, slow bool) {
	t.Helper()
	sizes := []int{10, 8 << 20, 100, 8 << 20, 3 << 20, 5, 2 << 20, 7}
	var frames []byte
	bodies := make([][]byte, len(sizes))
	large := int64(0)
	for i, n := range sizes {
		bodies[i] = bigBody(n, byte(i))
		frames = codec.AppendRequest(frames, request(int32(100+i), "App.S.Obj", "echo", bodies[i]))
		if n >= 1<<20 {
			large++
		}
	}
	taken := s.bodiesTaken.Load()
	written := make(chan error, 1)
	// A minute for 21 MiB: a write deadline that expires mid-record breaks a TLS stream for good
	// (the server then waits for the rest of the record, and every read here times out), which
	// testTimeout's 10 s did under -race beside two CPU hogs.
	if err := c.c.SetWriteDeadline(time.Now().Add(largeTimeout)); err != nil {
		t.Fatal(err)
	}
	go func() { _, err := c.c.Write(frames); written <- err }()
	if slow {
		time.Sleep(200 * time.Millisecond) // let the replies fill the socket
	}
	for i, n := range sizes {
		rsp := recvLarge(t, c)
		if rsp.RequestID != int32(100+i) || rsp.Ret != codec.RetOK {
			t.Fatalf("reply %d (slow reader %v): id %d ret %d, want id %d", i, slow, rsp.RequestID, rsp.Ret, 100+i)
		}
		if !bytes.Equal(rsp.Buffer, bodies[i]) {
			t.Fatalf("reply %d (slow reader %v): a body of %d bytes differs from the %d sent", i, slow, len(rsp.Buffer), n)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if got := s.bodiesTaken.Load() - taken; got != large {
		t.Fatalf("%d large bodies written from the handler's scratch, want all %d", got, large)
	}
}
