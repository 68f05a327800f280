package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// frameLen is the exact length of the frame the server writes for a success reply with a
// body of n bytes to request id (codec.AppendResponse, as appendReply does).
func frameLen(id int32, n int) int {
	return len(codec.AppendResponse(nil, &codec.ResponsePacket{
		Version: codec.VersionTars, PacketType: codec.PacketNormal, RequestID: id, Buffer: make([]byte, n),
	}))
}

// bodyForFrame returns the body length whose reply frame to id is exactly frame bytes.
func bodyForFrame(t *testing.T, id int32, frame int) int {
	t.Helper()
	over := frameLen(id, frame-32) - (frame - 32) // the frame's bytes besides the body
	n := frame - over
	if got := frameLen(id, n); got != frame {
		t.Fatalf("test setup: a %d-byte body makes a %d-byte frame, want %d", n, got, frame)
	}
	return n
}

// TestReplyAtLimitNotRefused: a reply whose frame is exactly max-packet-size (or one byte
// below) is within the limit -- replies.add's exact check and every reader's assembler accept a
// frame of length <= max -- so the client gets it. Before, Server.handle's estimate added 20 to
// the body, but such a frame can have fewer bytes besides its body: 18 for a body below 32 KiB
// (version 1, a request id below 128, zero codes, empty maps and description), 19 for a larger
// body to request id 0; the estimate was above the exact size, and the reply was refused with
// RetServerEncode although it fit.
func TestReplyAtLimitNotRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		id    int32
	}{
		{"16KiB", 16 << 10, 1},
		{"1MiB_id0", 1 << 20, 0},
	} {
		for _, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				leakCheck(t)
				for _, frame := range []int{tc.limit, tc.limit - 1} {
					n := bodyForFrame(t, tc.id, frame)
					if n < 4<<10 {
						t.Fatalf("test setup: body %d below 4 KiB", n)
					}
					_, addr := startServer(t, func(s *Server) {
						mustHandle(t, s, pbServant, "Fit", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
							return append(rsp, make([]byte, n)...), nil
						})
					}, append(m.opts, WithMaxPacketSize(tc.limit))...)
					rsp := dial(t, addr).call(request(tc.id, pbServant, "Fit", nil))
					if rsp.Ret != codec.RetOK || len(rsp.Buffer) != n {
						t.Errorf("reply frame of %d bytes, max-packet-size %d: client got ret %d desc %q, %d body bytes; want ret 0 with the %d-byte body (the frame fits)",
							frame, tc.limit, rsp.Ret, rsp.ResultDesc, len(rsp.Buffer), n)
					}
				}
			})
		}
	}
}

// TestTooLargeByContextInterceptorSees: a reply too large for max-packet-size because of
// its ResponseContext (the body is small) reaches the client as RetServerEncode (replies.add's
// exact check), and the interceptors (and the stats) see that code too. Before, Server.handle did
// not reckon replies whose body was below 4 KiB, and they recorded 0.
func TestTooLargeByContextInterceptorSees(t *testing.T) {
	const limit = 8 << 10
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			seen, icpt := retSeen()
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Ctx", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
					cur.ResponseContext = map[string]string{"k": strings.Repeat("v", 2*limit)}
					return append(rsp, "small"...), nil
				})
			}, append(m.opts, WithMaxPacketSize(limit), WithInterceptor(icpt))...)
			rsp := dial(t, addr).call(request(1, pbServant, "Ctx", nil))
			if rsp.Ret != codec.RetServerEncode {
				t.Fatalf("client got ret %d, want %d (the reply is above max-packet-size)", rsp.Ret, codec.RetServerEncode)
			}
			select {
			case ret := <-seen:
				if ret != rsp.Ret {
					t.Fatalf("the interceptor's info.Ret = %d, but the client got %d", ret, rsp.Ret)
				}
			case <-time.After(testTimeout):
				t.Fatal("the interceptor did not run")
			}
		})
	}
}

// TestUDPReplyAboveMaxPacketSize: over udp with max-packet-size below a datagram, a reply
// whose frame exceeds max-packet-size (a small body with a large ResponseContext) must be
// refused as Server.handle promises ("its frame above max-packet-size (or, on udp, above a
// datagram)"). Before, appendDatagramReply checked only datagram.MaxSize, and handle skipped
// small bodies, so it was sent, and a client with the same max-packet-size dropped it
// (adapterproxy/udp.go): its call timed out instead of getting -2.
func TestUDPReplyAboveMaxPacketSize(t *testing.T) {
	const limit = 2048
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			_, c := startUDP(t, func(s *Server) {
				mustHandle(t, s, "App.S.Obj", "Ctx", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
					cur.ResponseContext = map[string]string{"k": strings.Repeat("v", 2*limit)}
					return append(rsp, "small"...), nil
				})
			}, WithWorkers(workers), WithMaxPacketSize(limit))
			req := request(1, "App.S.Obj", "Ctx", nil)
			sendDatagram(t, c, codec.AppendRequest(nil, req))
			buf := make([]byte, 1<<16)
			if err := c.SetReadDeadline(time.Now().Add(testTimeout)); err != nil {
				t.Fatal(err)
			}
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("no reply: %v", err)
			}
			rsp := new(codec.ResponsePacket)
			if err := codec.DecodeResponse(buf[:n], rsp); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if n > limit || rsp.Ret != codec.RetServerEncode {
				t.Fatalf("got a %d-byte reply datagram with ret %d, max-packet-size %d; want a RetServerEncode (%d) reply within the limit",
					n, rsp.Ret, limit, codec.RetServerEncode)
			}
		})
	}
}

// TestOnewayLargeBodyNotFailed: a one-way request gets no reply, so the size its reply
// would have had cannot fail it. Before, Server.handle reckoned it and replaced the handler's
// success by RetServerEncode, which the interceptors and the stats recorded as a failure.
func TestOnewayLargeBodyNotFailed(t *testing.T) {
	const limit = 8 << 10
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			seen, icpt := retSeen()
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Big", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, make([]byte, 2*limit)...), nil
				})
			}, append(m.opts, WithMaxPacketSize(limit), WithInterceptor(icpt))...)
			req := request(1, pbServant, "Big", nil)
			req.PacketType = codec.PacketOneway
			dial(t, addr).write(codec.AppendRequest(nil, req))
			select {
			case ret := <-seen:
				if ret != codec.RetOK {
					t.Fatalf("one-way request whose handler succeeded: the interceptor's info.Ret = %d; want 0 (no reply is sent, its size cannot fail it)", ret)
				}
			case <-time.After(testTimeout):
				t.Fatal("the interceptor did not run")
			}
		})
	}
}
