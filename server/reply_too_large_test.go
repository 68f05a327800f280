package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestReplyAboveMaxPacketSize: a handler whose reply frame would exceed WithMaxPacketSize gets
// its client a RetServerEncode reply saying so, on a connection that stays served, in both
// modes, for a small body (copied into the output) and a large one (written from the handler's
// buffer). Before, the frame was written as is: a client with the same limit closed the
// connection on its length prefix, failing every other call on it (devregistry's reply listing
// 400,000 endpoints cut every naming refresh sharing its connection).
func TestReplyAboveMaxPacketSize(t *testing.T) {
	const limit = 4 << 20
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Echo", echo)
				mustHandle(t, s, pbServant, "Big", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
					return append(rsp, bigBody(limit, 1)...), nil // in the handler's buffer: written from it
				})
				mustHandle(t, s, pbServant, "Copied", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
					return bigBody(limit, 2), nil // a body of its own: copied into the output
				})
			}, slices.Concat(m.opts, []Option{WithMaxPacketSize(limit)})...)
			c := dial(t, addr)
			for i, fn := range []string{"Big", "Copied"} {
				rsp := c.call(request(int32(10+i), pbServant, fn, nil))
				if rsp.Ret != codec.RetServerEncode || !strings.Contains(rsp.ResultDesc, "exceeds max-packet-size") {
					t.Fatalf("%s: reply ret %d desc %q, %d bytes; want %d saying the reply exceeds max-packet-size",
						fn, rsp.Ret, rsp.ResultDesc, len(rsp.Buffer), codec.RetServerEncode)
				}
				checkEcho(c, int32(20+i)) // the connection is still served
			}
		})
	}
}
