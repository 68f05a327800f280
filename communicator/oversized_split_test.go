package communicator_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
)

// TestOversizedReplyHeadSplit: a reply above the client's max-packet-size fails its one
// call with ErrDecode and is skipped, the connection going on, whatever the reads that bring
// its first bytes. The peer (a raw server: the project's server cannot choose where TCP splits
// its writes) answers two calls at once: the first reply, then the oversized one. In "split" it
// writes the oversized reply's first 7 bytes (its length and part of its ids) with the first
// reply and the rest 100ms later; in "boundary" it writes everything at once, the first reply
// sized so that the client's first 64 KiB read ends 6 bytes into the second. Before, the client
// read the head from what the first read brought, could not, and closed the connection under
// both calls (found by a review of the change that made oversized frames skipped).
func TestOversizedReplyHeadSplit(t *testing.T) {
	const limit = 1 << 20
	reply := func(id int32, body []byte) []byte {
		return codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: id, Buffer: body})
	}
	// sized returns the reply to id whose frame is n bytes long.
	sized := func(id int32, n int) []byte {
		pad := n - len(reply(id, nil))
		for {
			b := reply(id, bytes.Repeat([]byte("p"), pad))
			if len(b) == n {
				return b
			}
			pad -= len(b) - n
		}
	}
	for _, tc := range []struct {
		name  string
		first int  // the first reply's frame length
		split bool // write the oversized reply's first 7 bytes apart
	}{{"split", 100, true}, {"boundary", 65536 - 6, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ln := listenLoopback(t)
			serveRaw(t, ln, func(_ int64, c net.Conn) {
				var pair []int32
				_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
					if !bytes.HasPrefix(req.Buffer, []byte("pair")) {
						_, err := c.Write(reply(req.RequestID, req.Buffer))
						return err == nil
					}
					if pair = append(pair, req.RequestID); len(pair) < 2 {
						return true
					}
					// The first call gets the first reply; the second the oversized one.
					a := sized(pair[0], tc.first)
					b := reply(pair[1], bytes.Repeat([]byte("y"), 2*limit))
					if tc.split {
						if _, err := c.Write(append(a, b[:7]...)); err != nil {
							return false
						}
						time.Sleep(100 * time.Millisecond)
						_, err := c.Write(b[7:])
						return err == nil
					}
					_, err := c.Write(append(a, b...))
					return err == nil
				})
			})
			addr := ln.Addr().String()
			comm := newComm(t, func(c *conf.Config) {
				c.NetThread = 1
				c.MaxPacketSize = limit
			})
			sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
			ctx := testCtx(t)
			if _, err := sp.InvokeRaw(ctx, "Echo", []byte("warm"), withTimeout(5*time.Second)...); err != nil {
				t.Fatalf("first call: %v", err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range 2 {
				wg.Go(func() {
					_, errs[i] = sp.InvokeRaw(ctx, "Echo", []byte("pair"), withTimeout(10*time.Second)...)
				})
			}
			wg.Wait()
			decodeErrs := 0
			for i, err := range errs {
				switch {
				case err == nil:
				case errors.Is(err, communicator.ErrDecode):
					decodeErrs++
				default:
					t.Errorf("call %d of the pair: %v; want one answered and one ErrDecode", i, err)
				}
			}
			if decodeErrs != 1 {
				t.Errorf("%d calls of the pair failed with ErrDecode, want 1", decodeErrs)
			}
			if out, err := sp.InvokeRaw(ctx, "Echo", []byte("after"), withTimeout(5*time.Second)...); err != nil || string(out) != "after" {
				t.Errorf("a call after: %q, %v", out, err)
			}
			if e, ok := attribEndpointStats(comm.Stats(), addr); !ok || e.ConnLosses != 0 {
				t.Errorf("endpoint stats (found %v): %d connections lost; want none (the oversized reply is skipped)", ok, e.ConnLosses)
			}
		})
	}
}

// TestOversizedReplyAtReadBoundary: the same with the project's server (inline
// mode) and no split write: two calls made together, the first answered with a reply whose frame
// is 6 bytes short of 64 KiB, the second with 2 MiB, above the client's 1 MiB. Whether the
// client's first read ends inside the second reply's head depends on timing: the test makes 10
// pairs of calls and counts the connections lost (3 of 10 were, before).
func TestOversizedReplyAtReadBoundary(t *testing.T) {
	const limit = 1 << 20
	h := func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		switch {
		case bytes.Equal(req, []byte("pad")):
			const want = 65536 - 6
			pad := want - len(codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: cur.RequestID}))
			for {
				n := len(codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: cur.RequestID,
					Buffer: make([]byte, pad)}))
				if n == want {
					return append(rsp, bytes.Repeat([]byte("p"), pad)...), nil
				}
				pad -= n - want
			}
		case bytes.Equal(req, []byte("big")):
			return append(rsp, bytes.Repeat([]byte("y"), 2*limit)...), nil
		}
		return append(rsp, req...), nil
	}
	_, addr := startEcho(t, "server", h, server.WithNumEventLoop(1), server.WithMaxPacketSize(4*limit))
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.MaxPacketSize = limit
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	ctx := testCtx(t)
	bad := 0
	for range 10 {
		var wg sync.WaitGroup
		var padErr, bigErr error
		wg.Go(func() { _, padErr = sp.InvokeRaw(ctx, "Echo", []byte("pad"), withTimeout(10*time.Second)...) })
		wg.Go(func() { _, bigErr = sp.InvokeRaw(ctx, "Echo", []byte("big"), withTimeout(10*time.Second)...) })
		wg.Wait()
		if padErr != nil || !errors.Is(bigErr, communicator.ErrDecode) {
			bad++
			t.Logf("pad: %v; big: %v", padErr, bigErr)
		}
	}
	e, _ := attribEndpointStats(comm.Stats(), addr)
	if bad > 0 || e.ConnLosses != 0 {
		t.Errorf("%d of 10 pairs went wrong, %d connections lost; want the big reply's call to fail with ErrDecode and none lost", bad, e.ConnLosses)
	}
}
