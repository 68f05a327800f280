package communicator_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// oversizeEcho is an Echo handler for the oversized-frame tests: a body starting "held" waits
// for release (counted in held), "big" is answered with 1.5 MiB, anything else is echoed.
func oversizeEcho(held *atomic.Int64, release <-chan struct{}) server.HandlerFunc {
	return func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		switch {
		case bytes.HasPrefix(req, []byte("held")) && ownCaller(cur):
			held.Add(1)
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		case bytes.Equal(req, []byte("big")):
			return append(rsp, bytes.Repeat([]byte("y"), 3<<19)...), nil
		}
		return append(rsp, req...), nil
	}
}

// oversizeAround makes four calls that the server holds on sp's one connection, then runs
// oversized (the call whose request or reply exceeds a max-packet-size) and checks that the
// held calls are answered once released, that a call after them succeeds, and that the
// connection was never lost. It returns oversized's error.
func oversizeAround(t *testing.T, comm *communicator.Communicator, sp *servantproxy.ServantProxy, addr string,
	held *atomic.Int64, release chan struct{}, oversized func(ctx context.Context) error) error {
	t.Helper()
	ctx := testCtx(t)
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf("held%d", i)
			out, err := sp.InvokeRaw(ctx, "Echo", []byte(body), withTimeout(15*time.Second)...)
			if err == nil && string(out) != body {
				err = fmt.Errorf("reply %q", out)
			}
			errs[i] = err
		})
	}
	waitFor(t, "the server to hold the 4 calls", func() bool { return held.Load() == n })
	err := oversized(ctx)
	close(release)
	wg.Wait()
	for i, e := range errs {
		if e != nil {
			t.Errorf("call %d in flight on the same connection: %v; want it answered", i, e)
		}
	}
	if out, e := sp.InvokeRaw(ctx, "Echo", []byte("after"), withTimeout(5*time.Second)...); e != nil || string(out) != "after" {
		t.Errorf("a call after the oversized one: %q, %v", out, e)
	}
	if e, ok := attribEndpointStats(comm.Stats(), addr); !ok || e.ConnLosses != 0 || e.Reconnects != 0 || e.Deactivated != 0 {
		t.Errorf("endpoint stats (found %v): %d connections lost, %d reconnects, deactivated %d times; want none",
			ok, e.ConnLosses, e.Reconnects, e.Deactivated)
	}
	return err
}

// TestOversizedRequestAnswered: a client whose max-packet-size is 4 MiB sends a 1.5 MiB request
// to a server whose limit is 1 MiB while four calls wait on the connection: the server answers
// it -1 naming the sizes, skips its bytes unread, and answers the four; the connection stays.
// Before, the server closed the connection: the call and the four failed with a connection
// error and the endpoint counted a failure.
func TestOversizedRequestAnswered(t *testing.T) {
	var held atomic.Int64
	release := make(chan struct{})
	_, addr := startEcho(t, "server", oversizeEcho(&held, release), server.WithNumEventLoop(1),
		server.WithWorkers(16), server.WithMaxPacketSize(1<<20))
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.MaxPacketSize = 4 << 20
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	err := oversizeAround(t, comm, sp, addr, &held, release, func(ctx context.Context) error {
		_, err := sp.InvokeRaw(ctx, "Echo", bytes.Repeat([]byte("x"), 3<<19), withTimeout(10*time.Second)...)
		return err
	})
	var se *servantproxy.ServerError
	if !errors.As(err, &se) || se.Code != -1 || !strings.Contains(se.Desc, "exceeds max-packet-size 1048576") {
		t.Errorf("a 1.5 MiB request to a server whose max-packet-size is 1 MiB: %v; want a -1 ServerError naming the limit", err)
	}
}

// TestOversizedReplySkipped: a server answers with 1.5 MiB a client whose max-packet-size is
// 1 MiB while four calls wait on the connection: that call fails with ErrDecode naming the
// sizes, the reply's bytes are skipped unread, and the four are answered; the connection stays.
// Before, the client closed the connection: the call and the four failed with a connection
// error and the endpoint was taken out of rotation.
func TestOversizedReplySkipped(t *testing.T) {
	var held atomic.Int64
	release := make(chan struct{})
	_, addr := startEcho(t, "server", oversizeEcho(&held, release), server.WithNumEventLoop(1), server.WithWorkers(16))
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 1
		c.MaxPacketSize = 1 << 20
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	err := oversizeAround(t, comm, sp, addr, &held, release, func(ctx context.Context) error {
		_, err := sp.InvokeRaw(ctx, "Echo", []byte("big"), withTimeout(10*time.Second)...)
		return err
	})
	if !errors.Is(err, communicator.ErrDecode) || !strings.Contains(err.Error(), "exceeds max-packet-size 1048576") {
		t.Errorf("a 1.5 MiB reply to a client whose max-packet-size is 1 MiB: %v; want ErrDecode naming the limit", err)
	}
}

// TestDamagedLengthClosesNotSkips: a reply whose length prefix was damaged (here to 336,289,144,
// the value the soak's garbage fault once made, the rest of the reply intact) closes the
// connection as a stream out of step, at once, and the calls after it go on a new connection:
// a reply longer than inbound.HeadLen, and one shorter, after which nothing comes until the next
// call. Before, the long one's readable head made the client skip that many bytes as an
// oversized reply (every later reply on the connection was skipped unread and its call timed
// out), and the short one left its call waiting for the 512 bytes of a head.
func TestDamagedLengthClosesNotSkips(t *testing.T) {
	for _, pad := range []int{600, 0} {
		t.Run(fmt.Sprintf("pad=%d", pad), func(t *testing.T) { damagedLength(t, pad) })
	}
}

func damagedLength(t *testing.T, pad int) {
	endToEnd(t)
	var damaged atomic.Bool
	rs := answeringPeer(t, func(req *codec.RequestPacket) []byte {
		if !strings.HasPrefix(string(req.Buffer), "damage") || !damaged.CompareAndSwap(false, true) {
			return nil // an echo
		}
		frame := codec.AppendResponse(nil, &codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID, Buffer: req.Buffer})
		binary.BigEndian.PutUint32(frame, 336289144)
		return frame
	})
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1 })
	sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
	ctx := testCtx(t)
	if _, err := sp.InvokeRaw(ctx, "Echo", []byte("damage"+strings.Repeat(".", pad)), withTimeout(time.Minute)...); err == nil ||
		errors.Is(err, communicator.ErrTimeout) || errors.Is(err, communicator.ErrDecode) {
		t.Fatalf("the call whose reply's length was damaged: %v; want the connection's error", err)
	}
	// The protocol error puts the endpoint in its reconnect backoff (25 ms at first): calls wait
	// it out, then go on a new connection.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := sp.InvokeRaw(ctx, "Echo", []byte("first"), withTimeout(time.Minute)...)
		if err == nil {
			break
		}
		if !errors.Is(err, communicator.ErrConnection) || time.Now().After(end) {
			t.Fatalf("a call after the damaged reply: %v", err)
		}
	}
	for i := range 3 {
		body := fmt.Sprintf("after %d", i)
		if got, err := sp.InvokeRaw(ctx, "Echo", []byte(body), withTimeout(time.Minute)...); err != nil || string(got) != body {
			t.Fatalf("call %d after the damaged reply: %q, %v", i, got, err)
		}
	}
	if n := rs.accepts.Load(); n != 2 {
		t.Errorf("the server accepted %d connections, want 2 (the damaged one closed, one after it)", n)
	}
}
