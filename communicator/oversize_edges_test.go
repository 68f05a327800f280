package communicator_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// oversizedReplyHead returns the first bytes of a well-formed reply frame of length bytes
// answering id: tags 1 to 5, the head of a simple-list body that ends 2 bytes before the
// frame's end, then an empty status map (tag 7), which is those 2 bytes; extra bytes of the
// body follow, so that at least n bytes are returned.
func oversizedReplyHead(id int32, length uint32, n int) []byte {
	b := []byte{0, 0, 0, 0, 0x10, 0x01, 0x2c, 0x32, 0, 0, 0, 0, 0x4c, 0x5c, 0x6d, 0x00, 0x02, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b, length)
	binary.BigEndian.PutUint32(b[8:], uint32(id))
	binary.BigEndian.PutUint32(b[17:], length-uint32(len(b))-2)
	for len(b) < n {
		b = append(b, 'z')
	}
	return b
}

// answeringPeer serves each request with what answer returns for it (nil: an echo).
func answeringPeer(t *testing.T, answer func(req *codec.RequestPacket) []byte) *rawServer {
	t.Helper()
	ln := listenLoopback(t)
	return serveRaw(t, ln, func(_ int64, c net.Conn) {
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			b := answer(req)
			if b == nil {
				b = codec.AppendResponse(nil, &codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID, Buffer: req.Buffer})
			}
			_, err := c.Write(b)
			return err == nil
		})
	})
}

// TestOversizeLengthLooksForeign: a well-formed reply above max-packet-size (and below
// inbound.MaxSkip, 1 GiB) whose 4 length bytes happen to read as the start of a TLS record
// (0x16 0x03 0x01: 369,295,616 bytes) or as text (0x30303030: 808,464,432 bytes) fails its
// call with ErrDecode and is skipped, as any other oversized reply whose head reads as a reply
// of that length. Before, inbound.Foreign was asked before the head, and the connection was
// closed as "the peer speaks TLS" / "does not speak TARS" (found by a review of the skip).
func TestOversizeLengthLooksForeign(t *testing.T) {
	for _, length := range []uint32{0x16030100, 0x30303030} {
		t.Run(fmt.Sprintf("%#x", length), func(t *testing.T) {
			rs := answeringPeer(t, func(req *codec.RequestPacket) []byte {
				if string(req.Buffer) == "big" {
					return oversizedReplyHead(req.RequestID, length, 600) // the rest never comes
				}
				return nil
			})
			comm := newComm(t, func(c *conf.Config) { c.NetThread = 1 })
			sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
			ctx := testCtx(t)
			if out, err := sp.InvokeRaw(ctx, "Echo", []byte("first"), withTimeout(10*time.Second)...); err != nil || string(out) != "first" {
				t.Fatalf("a call before: %q, %v", out, err)
			}
			_, err := sp.InvokeRaw(ctx, "Echo", []byte("big"), withTimeout(10*time.Second)...)
			if !errors.Is(err, communicator.ErrDecode) || !strings.Contains(err.Error(), "exceeds max-packet-size") {
				t.Errorf("a well-formed reply of %d bytes (above max-packet-size, below 1 GiB): %v; want ErrDecode naming the sizes", length, err)
			}
		})
	}
}

// TestOversizeGarbageHeadWaits: a reply whose length was damaged (83,886,080 bytes) and
// whose next bytes cannot be a reply's head whatever follows (tag 10 where tag 1 must be), and
// then nothing, closes the connection at once, as a short reply after a damaged length does
// (TestDamagedLengthClosesNotSkips/pad=0). Before, any error of the head check but
// ErrFrameMismatch read as "cannot tell yet": the Assembler waited for 512 bytes that never
// came and the call for its deadline (found by a review of the skip; now only codec.ErrTruncated
// waits).
func TestOversizeGarbageHeadWaits(t *testing.T) {
	rs := answeringPeer(t, func(req *codec.RequestPacket) []byte {
		if string(req.Buffer) == "damage" {
			b := make([]byte, 100)
			binary.BigEndian.PutUint32(b, 0x05000000)
			for i := 4; i < len(b); i++ {
				b[i] = 0xa2 // tag 10, int32: no tag 1 can follow
			}
			return b
		}
		return nil
	})
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1 })
	sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
	ctx := testCtx(t)
	start := time.Now()
	_, err := sp.InvokeRaw(ctx, "Echo", []byte("damage"), withTimeout(5*time.Second)...)
	if err == nil || errors.Is(err, communicator.ErrTimeout) {
		t.Errorf("a damaged length followed by 96 bytes that are no reply's head: %v after %v; want the connection's error at once",
			err, time.Since(start).Round(time.Millisecond))
	}
}

// TestOversizeTLS: over TLS (tlsconn.LoopConn on both sides; a large frame within the
// limit is decrypted straight into its buffer, the filler path) replies and requests above
// max-packet-size fail alone, among concurrent large frames within it, and the connection
// stays. "replies": client limit 1 MiB, server 4 MiB; "requests": client 4 MiB, server 1 MiB.
// Calls of 900 KiB echo, 1.5 MiB replies, 1.5 MiB requests.
func TestOversizeTLS(t *testing.T) {
	p := newTLSPKI(t)
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: p.ca.File, Cert: p.server.Cert, Key: p.server.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		clientMax, serverMax int
	}{{"replies", 1 << 20, 4 << 20}, {"requests", 4 << 20, 1 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startEcho(t, "server", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
				if bytes.HasPrefix(req, []byte("big")) {
					return append(rsp, bytes.Repeat([]byte("y"), 3<<19)...), nil
				}
				return append(rsp, req...), nil
			}, server.WithNumEventLoop(1), server.WithTLS(cfg), server.WithWorkers(8), server.WithMaxPacketSize(tc.serverMax))
			comm := tlsComm(t, tomlTLS(p.ca.File), func(c *conf.Config) { c.MaxPacketSize = tc.clientMax })
			sp := sslProxy(t, comm, servant, addr)
			ctx := testCtx(t)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 24 {
				wg.Go(func() {
					var body []byte
					switch i % 3 {
					case 0:
						body = bytes.Repeat([]byte{byte('a' + i%20)}, 900<<10)
					case 1:
						body = []byte(fmt.Sprintf("big%d", i)) // a 1.5 MiB reply
					case 2:
						body = bytes.Repeat([]byte("x"), 3<<19) // a 1.5 MiB request
					}
					out, err := sp.InvokeRaw(ctx, "Echo", body, withTimeout(20*time.Second)...)
					var se *servantproxy.ServerError
					switch {
					case i%3 == 0:
						if err != nil || !bytes.Equal(out, body) {
							errs <- fmt.Errorf("call %d (900 KiB echo): %d bytes, %v", i, len(out), err)
						}
					case i%3 == 1 && tc.name == "replies":
						if !errors.Is(err, communicator.ErrDecode) {
							errs <- fmt.Errorf("call %d (1.5 MiB reply): %v; want ErrDecode", i, err)
						}
					case i%3 == 1:
						if !errors.As(err, &se) || se.Code != -2 {
							errs <- fmt.Errorf("call %d (1.5 MiB reply from a 1 MiB server): %v; want -2", i, err)
						}
					case tc.name == "replies":
						if !errors.Is(err, communicator.ErrRequestTooLarge) {
							errs <- fmt.Errorf("call %d (1.5 MiB request, client limit 1 MiB): %v", i, err)
						}
					default:
						if !errors.As(err, &se) || se.Code != -1 {
							errs <- fmt.Errorf("call %d (1.5 MiB request to a 1 MiB server): %v; want -1", i, err)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if e, ok := attribEndpointStats(comm.Stats(), addr); !ok || e.ConnLosses != 0 || e.Reconnects != 0 {
				t.Errorf("endpoint stats (found %v): %d connections lost, %d reconnects; want none", ok, e.ConnLosses, e.Reconnects)
			}
		})
	}
}

// exactReply returns a reply frame answering req of exactly n bytes (n large enough for
// its fields), its body padded.
func exactReply(req *codec.RequestPacket, n int) []byte {
	pad := 0
	for {
		f := codec.AppendResponse(nil, &codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID,
			Buffer: bytes.Repeat([]byte("r"), pad)})
		if len(f) >= n {
			if len(f) == n {
				return f
			}
			pad -= len(f) - n
			if pad < 0 {
				return nil
			}
			continue
		}
		pad += n - len(f)
	}
}

// TestOversizeBoundaries: replies of exactly max-packet-size bytes are taken, those of
// one byte more (and around inbound.HeadLen) fail their call alone with ErrDecode, at the
// smallest max-packet-size (64) and others; the connection stays and the next call succeeds.
func TestOversizeBoundaries(t *testing.T) {
	for _, limit := range []int{64, 511, 512, 513, 4096, 70000} {
		t.Run(fmt.Sprintf("max=%d", limit), func(t *testing.T) {
			rs := answeringPeer(t, func(req *codec.RequestPacket) []byte {
				var n int
				if _, err := fmt.Sscanf(string(req.Buffer), "len:%d", &n); err == nil {
					return exactReply(req, n)
				}
				return nil
			})
			comm := newComm(t, func(c *conf.Config) {
				c.NetThread = 1
				c.MaxPacketSize = limit
			})
			sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
			ctx := testCtx(t)
			for _, n := range []int{limit - 1, limit, limit + 1, 511, 512, 513, 517, 2*limit + 600} {
				if n < 40 {
					continue
				}
				_, err := sp.InvokeRaw(ctx, "Echo", []byte(fmt.Sprintf("len:%d", n)), withTimeout(5*time.Second)...)
				switch {
				case n <= limit && err != nil:
					t.Errorf("a reply of %d bytes: %v; want it taken", n, err)
				case n > limit && !errors.Is(err, communicator.ErrDecode):
					t.Errorf("a reply of %d bytes: %v; want ErrDecode", n, err)
				}
				if out, err := sp.InvokeRaw(ctx, "Echo", []byte("k"), withTimeout(5*time.Second)...); err != nil || string(out) != "k" {
					t.Errorf("the call after a reply of %d bytes: %q, %v", n, out, err)
				}
			}
			if e, ok := attribEndpointStats(comm.Stats(), rs.addr()); !ok || e.ConnLosses != 0 || e.Reconnects != 0 {
				t.Errorf("endpoint stats (found %v): %d connections lost, %d reconnects; want none", ok, e.ConnLosses, e.Reconnects)
			}
		})
	}
}

// TestOversizeStrayReplies: oversized replies no call waits for (a push, id 0; an id never
// given; the reply to a call that already timed out) are skipped and counted (PushesDropped,
// Late), and neither the connection nor the next call suffers.
func TestOversizeStrayReplies(t *testing.T) {
	const limit = 4096
	big := func(id int32) []byte {
		return codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: id, Buffer: bytes.Repeat([]byte("b"), 3*limit)})
	}
	rs := answeringPeer(t, func(req *codec.RequestPacket) []byte {
		switch string(req.Buffer) {
		case "stray":
			echo := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: req.RequestID, Buffer: req.Buffer})
			return append(append(append(big(0), big(1<<30)...), big(req.RequestID+1000)...), echo...)
		case "slow":
			time.Sleep(300 * time.Millisecond)
			return big(req.RequestID)
		}
		return nil
	})
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.MaxPacketSize = limit
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
	ctx := testCtx(t)
	if out, err := sp.InvokeRaw(ctx, "Echo", []byte("stray"), withTimeout(5*time.Second)...); err != nil || string(out) != "stray" {
		t.Fatalf("a call whose reply follows three stray oversized ones: %q, %v", out, err)
	}
	if _, err := sp.InvokeRaw(ctx, "Echo", []byte("slow"), withTimeout(100*time.Millisecond)...); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("the slow call: %v, want a timeout", err)
	}
	time.Sleep(400 * time.Millisecond)
	if out, err := sp.InvokeRaw(ctx, "Echo", []byte("after"), withTimeout(5*time.Second)...); err != nil || string(out) != "after" {
		t.Fatalf("the call after: %q, %v", out, err)
	}
	e, ok := attribEndpointStats(comm.Stats(), rs.addr())
	if !ok || e.ConnLosses != 0 || e.Reconnects != 0 || e.PushesDropped != 1 || e.Pushes != 1 || e.Late != 3 {
		t.Errorf("endpoint stats (found %v): %d lost, %d reconnects, pushes %d dropped %d, late %d; want 0, 0, 1, 1, 3",
			ok, e.ConnLosses, e.Reconnects, e.Pushes, e.PushesDropped, e.Late)
	}
}

// TestOversizeDamagedLowByte: a reply above max-packet-size whose length prefix was
// damaged in its low bits (here +300 bytes: the head is intact) passes the head's check (its
// length is within MaxTrailer of the body's end); the bytes after its body then show the
// mismatch and close the connection, so the calls after it fail at once or go on a new
// connection, and none times out. Before, the client skipped 300 bytes past the frame: the
// replies of the next calls were eaten and those calls waited for their deadlines on a
// connection that looked healthy (found by a review of the skip).
func TestOversizeDamagedLowByte(t *testing.T) {
	const body = 2 << 20
	rs := answeringPeer(t, func(req *codec.RequestPacket) []byte {
		if string(req.Buffer) == "damage" {
			f := codec.AppendResponse(nil, &codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID,
				Buffer: make([]byte, body)})
			binary.BigEndian.PutUint32(f, uint32(len(f)+300))
			return f
		}
		return nil
	})
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.MaxPacketSize = 1 << 20
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
	ctx := testCtx(t)
	_, err := sp.InvokeRaw(ctx, "Echo", []byte("damage"), withTimeout(10*time.Second)...)
	t.Logf("the call whose reply's length was damaged: %v", err)
	timeouts := 0
	for i := range 3 {
		body := fmt.Sprintf("after %d", i)
		out, err := sp.InvokeRaw(ctx, "Echo", []byte(body), withTimeout(2*time.Second)...)
		switch {
		case errors.Is(err, communicator.ErrTimeout):
			timeouts++
			t.Logf("call %d after the damaged reply: %v", i, err)
		case err == nil && string(out) != body:
			t.Errorf("call %d after the damaged reply: got %q", i, out)
		}
	}
	if timeouts > 0 {
		t.Errorf("%d of 3 calls after a reply whose length was damaged by +300 timed out: their replies were skipped as part of it", timeouts)
	}
}
