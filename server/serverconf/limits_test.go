package serverconf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/server/serverconf"
)

// rawConn is a plain TCP connection to servant's adapter of srvs.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	fr *codec.FrameReader
}

func dialRaw(t *testing.T, srvs *serverconf.Servers, servant string) *rawConn {
	t.Helper()
	ep, _ := srvs.Endpoint(servant)
	c, err := net.DialTimeout("tcp", ep.Addr(), closeLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c, fr: codec.NewFrameReader(c, 64<<20)}
}

// send writes a request for servant.fn.
func (r *rawConn) send(servant, fn string, body []byte) {
	r.t.Helper()
	req := &codec.RequestPacket{Version: codec.VersionTars, RequestID: 1, ServantName: servant, FuncName: fn,
		Buffer: body, Timeout: 3000}
	if _, err := r.c.Write(codec.AppendRequest(nil, req)); err != nil {
		r.t.Fatal(err)
	}
}

// next reads the next frame, or the error that ends the connection.
func (r *rawConn) next() ([]byte, error) {
	if err := r.c.SetReadDeadline(time.Now().Add(closeLimit)); err != nil {
		return nil, err
	}
	return r.fr.Next()
}

// expectClosed checks that the server closed the connection, after any frames it sent.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	for {
		_, err := r.next()
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") {
			r.t.Fatalf("read: %v, want the connection closed", err)
		}
		return
	}
}

// TestLimits: an adapter's maxconns, its endpoint's -t and maxbacklog reach its server.
func TestLimits(t *testing.T) {
	large := bytes.Repeat([]byte("x"), 2<<20)
	srvs := start(t, `
[[server.adapter]]
servant = "App.S.LimitObj"
endpoint = "tcp -h 127.0.0.1 -p 0 -t 2000"
maxconns = 1
maxbacklog = 1048576
backpacketlimit = 2097152
backpacketmin = 10
`, func(s *serverconf.Servers) {
		echo(t, s, "App.S.LimitObj")
		if err := s.Server("App.S.LimitObj").Handle("App.S.LimitObj", "large",
			func(context.Context, *server.Current, []byte, []byte) ([]byte, error) { return large, nil }); err != nil {
			t.Fatal(err)
		}
	})
	srv := srvs.Server("App.S.LimitObj")

	a := dialRaw(t, srvs, "App.S.LimitObj")
	a.send("App.S.LimitObj", "echo", []byte("hi"))
	if _, err := a.next(); err != nil {
		t.Fatalf("the first connection: %v", err)
	}
	b := dialRaw(t, srvs, "App.S.LimitObj")
	b.expectClosed() // maxconns = 1
	a.expectClosed() // idle for -t 2000 (2 s: a's close cannot come before b is refused)
	if got := srv.LimitStats(); got.Refused != 1 || got.Idle != 1 {
		t.Fatalf("LimitStats() = %+v, want one refused (maxconns) and one closed idle (-t)", got)
	}

	var c *rawConn
	deadline := time.Now().Add(closeLimit)
	for srv.LimitStats().Backlog == 0 { // a's close may not have been counted yet: b may be refused
		if time.Now().After(deadline) {
			t.Fatal("a reply over maxbacklog did not close its connection")
		}
		c = dialRaw(t, srvs, "App.S.LimitObj")
		c.send("App.S.LimitObj", "large", nil)
		c.expectClosed()
	}
}

// TestLimitErrors: bad values of the limit keys are refused, naming the key.
func TestLimitErrors(t *testing.T) {
	const adapter = "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1 -p 0\"\n"
	for _, tc := range []struct{ key, want string }{
		{"maxconns = -2", "conf: server.adapter[0].maxconns = -2: must be between -1 and 4194303"},
		{"queuetimeout = -2", "conf: server.adapter[0].queuetimeout = -2: must be between -1 and 86400000"},
		{"backpacketlimit = -3", "conf: server.adapter[0].backpacketlimit = -3: must be between -1 and 2147483647"},
		{"backpacketmin = -1", "conf: server.adapter[0].backpacketmin = -1: must be between 0 and 2147483647"},
		{"maxbacklog = -2", "conf: server.adapter[0].maxbacklog = -2: must be between -1 and 1099511627776"},
	} {
		cfg, err := conf.Parse([]byte(adapter + tc.key))
		if err == nil {
			_, err = serverconf.New(cfg.Server)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one containing %q", tc.key, err, tc.want)
		}
	}
}

// TestFrameBudget: the [server]'s frame-budget reaches every adapter's server: a request of
// 2 MiB that stalls after its first bytes is received beyond a budget of 1 MiB, into a growing
// buffer, and answered once the rest arrives.
func TestFrameBudget(t *testing.T) {
	srvs := start(t, `
[server]
frame-budget = 1048576

[[server.adapter]]
servant = "App.S.BudgetObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
`, func(s *serverconf.Servers) { echo(t, s, "App.S.BudgetObj") })
	srv := srvs.Server("App.S.BudgetObj")
	c := dialRaw(t, srvs, "App.S.BudgetObj")
	body := bytes.Repeat([]byte("b"), 2<<20)
	frame := codec.AppendRequest(nil, &codec.RequestPacket{Version: codec.VersionTars, RequestID: 1,
		ServantName: "App.S.BudgetObj", FuncName: "echo", Buffer: body, Timeout: 3000})
	if _, err := c.c.Write(frame[:100]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(closeLimit)
	for srv.LimitStats().Grown != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("LimitStats() = %+v: the stalled request was not received beyond the budget", srv.LimitStats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.c.Write(frame[100:]); err != nil {
		t.Fatal(err)
	}
	f, err := c.next()
	if err != nil {
		t.Fatal(err)
	}
	var rsp codec.ResponsePacket
	if err := codec.DecodeResponse(f, &rsp); err != nil || rsp.Ret != codec.RetOK || !bytes.Equal(rsp.Buffer, append([]byte("App.S.BudgetObj:"), body...)) {
		t.Fatalf("reply: %v, ret %d, %d bytes", err, rsp.Ret, len(rsp.Buffer))
	}
}

// queueBehindHeld starts an adapter of obj with one handler goroutine and the given
// queuetimeout, holds that goroutine with a first request for hold while a second waits behind
// it (both go in one write, so the second is queued as soon as the first is handed to the
// handler), and returns the two replies, in order, whether the second's handler ran, and the
// servers.
func queueBehindHeld(t *testing.T, obj string, queueTimeout int, hold time.Duration) ([2]codec.ResponsePacket, bool, *serverconf.Servers) {
	t.Helper()
	entered := make(chan string, 4)
	release := make(chan struct{})
	srvs := start(t, fmt.Sprintf(`
[[server.adapter]]
servant = %q
endpoint = "tcp -h 127.0.0.1 -p 0"
threads = 1
queuetimeout = %d
`, obj, queueTimeout), func(s *serverconf.Servers) {
		if err := s.Server(obj).Handle(obj, "block", func(_ context.Context, _ *server.Current, req []byte, _ []byte) ([]byte, error) {
			entered <- string(req)
			if string(req) == "first" {
				<-release
			}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	c := dialRaw(t, srvs, obj)
	var frames []byte
	for i, body := range []string{"first", "second"} {
		frames = codec.AppendRequest(frames, &codec.RequestPacket{Version: codec.VersionTars, RequestID: int32(i + 1),
			ServantName: obj, FuncName: "block", Buffer: []byte(body), Timeout: 60000})
	}
	if _, err := c.c.Write(frames); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-entered:
		if got != "first" {
			t.Fatalf("handler entered with %q", got)
		}
	case <-time.After(closeLimit):
		t.Fatal("the first request's handler did not run")
	}
	time.Sleep(hold)
	close(release)
	var rsps [2]codec.ResponsePacket
	for i := range rsps {
		f, err := c.next()
		if err != nil {
			t.Fatal(err)
		}
		if err := codec.DecodeResponse(f, &rsps[i]); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-entered:
		return rsps, true, srvs
	default:
		return rsps, false, srvs
	}
}

// TestQueueTimeoutKey: an adapter's queuetimeout reaches its server: with its one handler
// goroutine held longer than that, the request queued behind it is answered -6 (server queue
// timeout) without running; the held one succeeds.
func TestQueueTimeoutKey(t *testing.T) {
	// The second waits past queuetimeout (3 s, the least).
	rsps, ran, srvs := queueBehindHeld(t, "App.S.QueueObj", 3000, 3300*time.Millisecond)
	for i, want := range []int32{codec.RetOK, codec.RetQueueTimeout} {
		if rsps[i].RequestID != int32(i+1) || rsps[i].Ret != want {
			t.Fatalf("reply id %d ret %d (%q), want id %d ret %d", rsps[i].RequestID, rsps[i].Ret, rsps[i].ResultDesc, i+1, want)
		}
	}
	if ran {
		t.Fatal("the handler ran for the second request, which timed out in the queue")
	}
	if got := srvs.Server("App.S.QueueObj").LimitStats().QueueTimeout; got != 1 {
		t.Fatalf("LimitStats().QueueTimeout = %d, want 1", got)
	}
}
