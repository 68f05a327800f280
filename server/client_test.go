package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// testTimeout bounds every wait of a test.
const testTimeout = 10 * time.Second

// largeTimeout bounds what waits for megabytes to move (a large reply read, a backlog building):
// under -race on a busy machine whose page faults are slow, tens of seconds.
const largeTimeout = time.Minute

// startServer starts a server on 127.0.0.1:0 with the handlers registered by setup and stops
// it when the test ends.
func startServer(t testing.TB, setup func(s *Server), opts ...Option) (*Server, string) {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		opts = append([]Option{WithLogger(zaptest.NewLogger(tt))}, opts...)
	}
	s := New(opts...)
	if setup != nil {
		setup(s)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s, addr.String()
}

// mustHandle registers h or fails the test.
func mustHandle(t testing.TB, s *Server, servant, fn string, h HandlerFunc) {
	t.Helper()
	if err := s.Handle(servant, fn, h); err != nil {
		t.Fatalf("Handle(%q, %q): %v", servant, fn, err)
	}
}

// echo answers with the request body.
func echo(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
	return append(rsp, req...), nil
}

// client is a plain net.Conn TARS client for tests.
type client struct {
	t  testing.TB
	c  net.Conn
	fr *codec.FrameReader
	// notices counts the stoppingNotice frames readFrame skipped, as a TarsGo client drops
	// them: the tests read the replies around them.
	notices int
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}
}

// write sends raw bytes.
func (c *client) write(b []byte) {
	c.t.Helper()
	if err := c.c.SetWriteDeadline(time.Now().Add(testTimeout)); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.c.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readFrame reads the next frame within d (a copy), skipping the notice of a Stop.
func (c *client) readFrame(d time.Duration) ([]byte, error) {
	if err := c.c.SetReadDeadline(time.Now().Add(d)); err != nil {
		return nil, err
	}
	for {
		f, err := c.fr.Next()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(f, stoppingNotice) {
			c.notices++
			continue
		}
		return append([]byte(nil), f...), nil
	}
}

// recv reads and decodes the next response.
func (c *client) recv() *codec.ResponsePacket {
	c.t.Helper()
	return c.recvWithin(testTimeout)
}

// recvWithin is recv with a bound of d.
func (c *client) recvWithin(d time.Duration) *codec.ResponsePacket {
	c.t.Helper()
	f, err := c.readFrame(d)
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	rsp := new(codec.ResponsePacket)
	if err := codec.DecodeResponse(f, rsp); err != nil {
		c.t.Fatalf("decode response %x: %v", f, err)
	}
	return rsp
}

// call sends req and returns the next response, which must answer it.
func (c *client) call(req *codec.RequestPacket) *codec.ResponsePacket {
	c.t.Helper()
	c.write(codec.AppendRequest(nil, req))
	rsp := c.recv()
	if rsp.RequestID != req.RequestID {
		c.t.Fatalf("response id = %d, want %d", rsp.RequestID, req.RequestID)
	}
	return rsp
}

// expectClosed checks that the server closes the connection without sending anything.
func (c *client) expectClosed() {
	c.t.Helper()
	f, err := c.readFrame(testTimeout)
	if err == nil {
		c.t.Fatalf("got frame %x, want the connection closed", f)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isReset(err) {
		c.t.Fatalf("read: %v, want EOF or reset", err)
	}
}

// expectSilence checks that nothing arrives within d.
func (c *client) expectSilence(d time.Duration) {
	c.t.Helper()
	f, err := c.readFrame(d)
	if err == nil {
		c.t.Fatalf("got frame %x, want none", f)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("read: %v, want a timeout", err)
	}
	// The FrameReader's errors are sticky; nothing was buffered, so start a new one.
	c.fr = codec.NewFrameReader(c.c, 0)
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// request returns a normal request of servant.fn with body.
func request(id int32, servant, fn string, body []byte) *codec.RequestPacket {
	return &codec.RequestPacket{
		Version:     codec.VersionTars,
		PacketType:  codec.PacketNormal,
		RequestID:   id,
		ServantName: servant,
		FuncName:    fn,
		Buffer:      body,
		Timeout:     3000,
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
