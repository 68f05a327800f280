package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// rvHeld is a handler that records the Pusher of each call (to watch its connection's state
// from the test), signals that it runs, and answers req once released.
type rvHeld struct {
	mu      sync.Mutex
	pushers []*Pusher
	started chan struct{}
	release chan struct{}
	body    []byte // if set, the reply body instead of req
}

func newRVHeld() *rvHeld {
	return &rvHeld{started: make(chan struct{}, 64), release: make(chan struct{})}
}

func (h *rvHeld) handle(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
	h.mu.Lock()
	h.pushers = append(h.pushers, cur.Pusher())
	h.mu.Unlock()
	h.started <- struct{}{}
	select {
	case <-h.release:
	case <-time.After(testTimeout):
	}
	if h.body != nil {
		return append(rsp, h.body...), nil
	}
	return append(rsp, req...), nil
}

func (h *rvHeld) waitStarted(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-h.started:
		case <-time.After(testTimeout):
			t.Fatalf("handler %d of %d did not start", i+1, n)
		}
	}
}

// serverSawClose waits, at most d, until the server has closed the connection of the first
// recorded call (OnClose ran), and reports whether it did.
func (h *rvHeld) serverSawClose(d time.Duration) bool {
	h.mu.Lock()
	p := h.pushers[0]
	h.mu.Unlock()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if p.Closed() {
			return true
		}
	}
	return p.Closed()
}

// TestReviewHalfCloseWorkersKeepsReplies: in worker mode a client sends three requests, the
// server reads them and hands them to its workers, and the client half-closes its write side
// (CloseWrite: "no more requests", the way a batch client or `nc -N` ends its input). The
// replies to the requests already received must still be written, then the connection closed,
// as a TarsGo server does (tcphandler.recv, on EOF, waits until the connection's numInvoke is 0
// before conn.Close, and its handlers write their replies themselves). The server closes the
// connection on the EOF at once and the workers' replies are dropped (flush: "the connection is
// gone").
func TestReviewHalfCloseWorkersKeepsReplies(t *testing.T) {
	leakCheck(t)
	h := newRVHeld()
	_, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Held", h.handle) },
		WithWorkers(4), WithNumEventLoop(1))
	c := dial(t, addr)
	const n = 3
	var frames []byte
	for i := range n {
		frames = codec.AppendRequest(frames, request(int32(i+1), pbServant, "Held", []byte{byte('a' + i)}))
	}
	c.write(frames)
	h.waitStarted(t, n) // the server has read all three requests; their handlers run
	if err := c.c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	// Let the server see the FIN before the handlers return (a fixed server may keep the
	// connection open: then this waits out its bound and goes on).
	closedEarly := h.serverSawClose(2 * time.Second)
	close(h.release)

	got := map[int32]string{}
	for range n {
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("after %d of %d replies: %v (server closed the connection before the handlers "+
				"returned: %v); want every reply to a request received before the client's CloseWrite, "+
				"then the close", len(got), n, err, closedEarly)
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil {
			t.Fatal(err)
		}
		if rsp.Ret != codec.RetOK {
			t.Fatalf("reply %d: ret %d %q", rsp.RequestID, rsp.Ret, rsp.ResultDesc)
		}
		got[rsp.RequestID] = string(rsp.Buffer)
	}
	for i := range n {
		if want := string(rune('a' + i)); got[int32(i+1)] != want {
			t.Fatalf("reply %d: %q, want %q (all: %v)", i+1, got[int32(i+1)], want, got)
		}
	}
	c.expectClosed()
}

// TestReviewHalfCloseInlineLargeReply: in inline mode a client asks for a 4 MiB reply and
// half-closes its write side at once, reading the reply only afterwards (its receive buffer is
// small, so most of the reply waits in the server). The whole reply must arrive, then the close.
// The server closes the connection on the EOF: gnet's close writes what the socket takes without
// blocking, the large-reply writer is stopped (OnClose), and the client gets a truncated frame.
func TestReviewHalfCloseInlineLargeReply(t *testing.T) {
	leakCheck(t)
	body := bigBody(4<<20, 7) // at least bigwrite.Min: a bigwrite.Writer finishes it
	var mu sync.Mutex
	var pu *Pusher
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Large", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			mu.Lock()
			pu = cur.Pusher()
			mu.Unlock()
			return append(rsp, body...), nil
		})
	}, WithWorkers(0), WithNumEventLoop(1))
	c := dialSmallRcvBuf(t, addr)
	c.write(codec.AppendRequest(nil, request(1, pbServant, "Large", nil)))
	if err := c.c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) for the server to have handled the request and seen the FIN.
	closed := false
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && !closed; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		closed = pu != nil && pu.Closed()
		mu.Unlock()
	}
	f, err := c.readFrame(testTimeout)
	if err != nil {
		t.Fatalf("reading the %d-byte reply after CloseWrite: %v (server had closed: %v); want the "+
			"whole reply to the request sent before CloseWrite, then the close", len(body), err, closed)
	}
	var rsp codec.ResponsePacket
	if err := codec.DecodeResponse(f, &rsp); err != nil {
		t.Fatal(err)
	}
	if rsp.RequestID != 1 || !bytes.Equal(rsp.Buffer, body) {
		t.Fatalf("reply: id %d, %d bytes, want id 1 with the %d-byte body", rsp.RequestID, len(rsp.Buffer), len(body))
	}
	if _, err := c.readFrame(testTimeout); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("after the reply: %v, want the close", err)
	}
}
