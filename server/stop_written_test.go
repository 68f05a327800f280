package server

import (
	"bytes"
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// dialSmallRcvBuf dials addr with a small receive buffer, so that the server's replies pile up in
// its own buffers while the test does not read.
func dialSmallRcvBuf(t *testing.T, addr string) *client {
	t.Helper()
	d := net.Dialer{Timeout: testTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}
}

// TestStopWritesComputedReplies: Stop waits for "the handlers in flight and the writing of their
// replies". Every handler here has returned and its reply was handed to the connection before
// Stop; the client reads them only once Stop has begun. Every reply must reach the client before
// the connection closes, and Stop return nil. The replies (900 KiB each, under bigwrite.Min, so
// they go through gnet's outbound buffer) total 9 MB, more than the socket buffers hold: Stop
// used to close the connection once the handlers were done, and gnet's close dropped what the
// socket did not take at once.
func TestStopWritesComputedReplies(t *testing.T) {
	for _, m := range []struct {
		name string
		opts []Option
	}{{"inline", nil}, {"workers", []Option{WithWorkers(1)}}} { // one worker: replies in request order
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			const n, size = 10, 900 << 10
			blob := bigBody(size, 3) // not the handler's scratch: copied into the reply buffer
			called := make(chan struct{}, n)
			s := New(append([]Option{WithNumEventLoop(1)}, m.opts...)...)
			mustHandle(t, s, pbServant, "Blob", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
				called <- struct{}{}
				return blob, nil
			})
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

			stopped := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				stopped <- s.Stop(ctx)
			}()
			// Give Stop a moment (a liveness bound, not an assertion): a Stop that waits for the
			// replies to be written keeps waiting; then the client reads.
			var stopErr error
			stopDone := false
			select {
			case stopErr = <-stopped:
				stopDone = true
			case <-time.After(2 * time.Second):
			}

			c.fr = codec.NewFrameReader(c.c, 0)
			for i := range n {
				f, err := c.readFrame(testTimeout)
				if err != nil {
					t.Fatalf("reply %d of %d: %v (Stop returned before the client read: %v, with %v): "+
						"a reply computed before Stop was dropped when Stop closed the connection",
						i+1, n, err, stopDone, stopErr)
				}
				var rsp codec.ResponsePacket
				if err := codec.DecodeResponse(f, &rsp); err != nil {
					t.Fatalf("reply %d: %v", i+1, err)
				}
				if rsp.RequestID != int32(i+1) || rsp.Ret != codec.RetOK || !bytes.Equal(rsp.Buffer, blob) {
					t.Fatalf("reply %d: id %d ret %d, %d bytes", i+1, rsp.RequestID, rsp.Ret, len(rsp.Buffer))
				}
			}
			if !stopDone {
				stopErr = <-stopped
			}
			if stopErr != nil {
				t.Fatalf("Stop: %v", stopErr)
			}
		})
	}
}
