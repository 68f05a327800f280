package server

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestStopKeepsWrittenRepliesOfSendingClient: Stop promises to wait for "the handlers in
// flight and the writing of their replies" before it closes the connections
// (TestStopWritesComputedReplies checks it for a client that sends nothing more). Here the client
// is still sending when Stop closes its connection: it is uploading a large request (5 MiB, in
// 512-byte pieces, one a millisecond), as a client that pipelines calls does. Every handler has
// returned and its reply was handed to the socket before Stop; the client reads them once Stop
// has begun. Every reply must reach it.
//
// Before, Stop returned nil within milliseconds and the client gets none of the
// replies: it read what its 4 KiB receive buffer held, then the end of the stream. The server
// closed the socket while it held request bytes it had not read, and Linux answers such a close
// with a reset, which discards everything still in the socket's send queue (2 MB of replies
// here; on a real network, whatever is not yet acknowledged).
func TestStopKeepsWrittenRepliesOfSendingClient(t *testing.T) {
	for _, m := range []struct {
		name string
		opts []Option
	}{{"inline", nil}, {"workers", []Option{WithWorkers(1)}}} { // one worker: replies in request order
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			const n, size = 10, 200 << 10
			blob := bigBody(size, 5)
			called := make(chan struct{}, n)
			s := New(append([]Option{WithNumEventLoop(1)}, m.opts...)...)
			mustHandle(t, s, pbServant, "Blob", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
				called <- struct{}{}
				return blob, nil
			})
			mustHandle(t, s, pbServant, "Echo", echo)
			stopOnCleanup(t, s)
			a, err := s.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			c := dialSmallRcvBuf(t, a.String())
			for i := range n {
				c.write(codec.AppendRequest(nil, request(int32(i+1), pbServant, "Blob", nil)))
				select {
				case <-called:
				case <-time.After(testTimeout):
					t.Fatalf("handler %d not called", i+1)
				}
			}

			// The client goes on sending: a large request, a piece at a time.
			upload := codec.AppendRequest(nil, request(n+1, pbServant, "Echo", make([]byte, 5<<20)))
			quit, uploaded := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(uploaded)
				for off := 0; off < len(upload); off += 512 {
					select {
					case <-quit:
						return
					case <-time.After(time.Millisecond):
					}
					_ = c.c.SetWriteDeadline(time.Now().Add(testTimeout))
					if _, err := c.c.Write(upload[off:min(off+512, len(upload))]); err != nil {
						return
					}
				}
			}()
			defer func() { close(quit); <-uploaded }()
			time.Sleep(100 * time.Millisecond) // the upload is under way

			start := time.Now()
			stopped := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				stopped <- s.Stop(ctx)
			}()
			// Give Stop a moment (a liveness bound, not an assertion); then the client reads.
			var stopErr error
			stopIn := time.Duration(0)
			select {
			case stopErr = <-stopped:
				stopIn = time.Since(start)
			case <-time.After(2 * time.Second):
			}

			for i := range n {
				f, err := c.readFrame(testTimeout)
				if err != nil {
					t.Fatalf("reply %d of %d: %v (Stop returned %v after %v; 0: not yet): the replies written "+
						"before Stop were discarded when it closed the connection of a client still sending",
						i+1, n, err, stopErr, stopIn)
				}
				var rsp codec.ResponsePacket
				if err := codec.DecodeResponse(f, &rsp); err != nil {
					t.Fatalf("reply %d: %v", i+1, err)
				}
				if rsp.RequestID != int32(i+1) || rsp.Ret != codec.RetOK || !bytes.Equal(rsp.Buffer, blob) {
					t.Fatalf("reply %d: id %d ret %d, %d bytes", i+1, rsp.RequestID, rsp.Ret, len(rsp.Buffer))
				}
			}
			if stopIn == 0 {
				stopErr = <-stopped
			}
			if stopErr != nil {
				t.Fatalf("Stop: %v", stopErr)
			}
		})
	}
}
