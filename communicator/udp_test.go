package communicator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const udpServant = "Test.Server.UDPObj"

// udpServer is a project server serving udpServant over UDP on loopback: "echo" answers with
// the request body, "count" with the number of requests it has seen.
type udpServer struct {
	srv   *server.Server
	addr  *net.UDPAddr
	calls atomic.Int64
}

func startUDPServer(t *testing.T) *udpServer {
	t.Helper()
	endToEnd(t)
	u := &udpServer{}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("udp-server")))
	if err := s.Handle(udpServant, "echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		u.calls.Add(1)
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("udp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.srv, u.addr = s, a.(*net.UDPAddr)
	t.Cleanup(func() {
		if err := stopServer(t, "udp server", s); err != nil {
			t.Errorf("stop udp server: %v", err)
		}
	})
	return u
}

func udpEndpoint(a *net.UDPAddr) string {
	return fmt.Sprintf("udp -h %s -p %d", a.IP, a.Port)
}

// udpRelay forwards datagrams between one client and a UDP server, on loopback, and lets a test
// drop or damage the replies: what a lossy network does to UDP.
type udpRelay struct {
	ln     *net.UDPConn // the client side
	up     *net.UDPConn // connected to the server
	client atomic.Pointer[net.UDPAddr]
	// reply decides what happens to a reply whose body is body: its bytes to forward, or nil to
	// drop it.
	reply func(frame []byte, body string) []byte
	wg    sync.WaitGroup
}

func startRelay(t *testing.T, server *net.UDPAddr, reply func(frame []byte, body string) []byte) *udpRelay {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.DialUDP("udp", nil, server)
	if err != nil {
		t.Fatal(err)
	}
	r := &udpRelay{ln: ln, up: up, reply: reply}
	r.wg.Add(2)
	go func() { // client -> server
		defer r.wg.Done()
		buf := make([]byte, 1<<16)
		for {
			n, from, err := ln.ReadFromUDP(buf)
			if err != nil {
				return
			}
			r.client.Store(from)
			_, _ = up.Write(buf[:n])
		}
	}()
	go func() { // server -> client
		defer r.wg.Done()
		buf := make([]byte, 1<<16)
		for {
			n, err := up.Read(buf)
			if err != nil {
				return
			}
			var rsp codec.ResponsePacket
			out := buf[:n]
			if codec.DecodeResponse(out, &rsp) == nil {
				out = r.reply(out, string(rsp.Buffer))
			}
			if to := r.client.Load(); out != nil && to != nil {
				_, _ = ln.WriteToUDP(out, to)
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		_ = up.Close()
		r.wg.Wait()
	})
	return r
}

func (r *udpRelay) addr() *net.UDPAddr { return r.ln.LocalAddr().(*net.UDPAddr) }

// udpProxy returns a ServantProxy of udpServant at the endpoints eps.
func udpProxy(t *testing.T, c *communicator.Communicator, eps ...string) *servantproxy.ServantProxy {
	t.Helper()
	sp, err := c.Proxy(udpServant + "@" + strings.Join(eps, ":"))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestUDPCalls: sync, async, future and one-way calls to a udp endpoint of the project's server
// are answered, each by its own reply.
func TestUDPCalls(t *testing.T) {
	u := startUDPServer(t)
	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 2 })
	sp := udpProxy(t, c, udpEndpoint(u.addr))
	ctx := testCtx(t)

	for i := range 20 {
		body := fmt.Appendf(nil, "sync-%d", i)
		got, err := sp.InvokeRaw(ctx, "echo", body)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("sync call %d: %q, %v", i, got, err)
		}
	}

	const n = 200
	type result struct {
		want string
		got  []byte
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		want := fmt.Sprintf("async-%d", i)
		if err := sp.AsyncInvokeRaw(ctx, "echo", []byte(want), func(b []byte, err error) {
			results <- result{want, bytes.Clone(b), err}
		}); err != nil {
			t.Fatalf("async call %d: %v", i, err)
		}
	}
	for range n {
		r := <-results
		if r.err != nil || string(r.got) != r.want {
			t.Fatalf("async reply %q, %v; want %q", r.got, r.err, r.want)
		}
	}

	got, err := sp.FutureInvokeRaw(ctx, "echo", []byte("future")).Get(ctx)
	if err != nil || string(got) != "future" {
		t.Fatalf("future: %q, %v", got, err)
	}

	before := u.calls.Load()
	if err := sp.InvokeOnewayRaw(ctx, "echo", []byte("oneway")); err != nil {
		t.Fatalf("one-way: %v", err)
	}
	waitFor(t, "the one-way call reaches the server", func() bool { return u.calls.Load() == before+1 })

	if d := u.srv.DroppedDatagrams(); d != 0 {
		t.Errorf("server dropped %d datagrams", d)
	}
}

// TestUDPLostReply: a reply the network drops leaves its call to its deadline (ErrTimeout); the
// calls around it are answered. A reply damaged on the way (truncated, or with a trailing byte)
// is dropped and counted by the client, and its call times out too; nothing panics or closes.
func TestUDPLostReply(t *testing.T) {
	u := startUDPServer(t)
	relay := startRelay(t, u.addr, func(frame []byte, body string) []byte {
		switch body {
		case "lose":
			return nil
		case "truncate":
			return frame[:len(frame)-2]
		case "trail":
			return append(bytes.Clone(frame), 0)
		}
		return frame
	})
	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 1 })
	sp := udpProxy(t, c, udpEndpoint(relay.addr()))
	ctx := testCtx(t)

	for _, body := range []string{"a", "lose", "b", "truncate", "c", "trail", "d"} {
		got, err := sp.InvokeRaw(ctx, "echo", []byte(body), servantproxy.WithTimeout(300*time.Millisecond))
		switch body {
		case "lose", "truncate", "trail":
			if !errors.Is(err, communicator.ErrTimeout) {
				t.Fatalf("%s: %q, %v; want ErrTimeout", body, got, err)
			}
		default:
			if err != nil || string(got) != body {
				t.Fatalf("%s: %q, %v", body, got, err)
			}
		}
	}
	var bad, timeouts uint64
	for _, e := range c.Stats().Endpoints {
		if e.Servant == udpServant {
			bad += e.BadDatagrams
			timeouts += e.Timeouts
		}
	}
	if bad != 2 || timeouts != 3 {
		t.Errorf("client counted %d bad datagrams and %d timeouts, want 2 and 3", bad, timeouts)
	}
}

// TestUDPOversize: a request larger than a datagram carries is refused before it is sent, with
// an error naming the limit; one just under the limit is served.
func TestUDPOversize(t *testing.T) {
	u := startUDPServer(t)
	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 1 })
	sp := udpProxy(t, c, udpEndpoint(u.addr))
	ctx := testCtx(t)

	_, err := sp.InvokeRaw(ctx, "echo", make([]byte, 70000))
	if !errors.Is(err, communicator.ErrDatagramTooLarge) || !strings.Contains(err.Error(), "65507") {
		t.Fatalf("70000-byte request: %v; want ErrDatagramTooLarge naming 65507", err)
	}
	if n := u.calls.Load(); n != 0 {
		t.Fatalf("the server saw %d calls, want none", n)
	}
	body := bytes.Repeat([]byte{'u'}, 60000)
	got, err := sp.InvokeRaw(ctx, "echo", body)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("60000-byte request: %d bytes, %v", len(got), err)
	}
}

// TestUDPNoServer: a call to a udp port nobody serves fails with a connection error (the kernel
// reports the ICMP port unreachable on the connected socket; loopback never rate-limits ICMP),
// never a reply or a hang; the next ones fail at once during the reconnect backoff, and the
// health rules take the endpoint out of rotation, so calls go to the live endpoint.
func TestUDPNoServer(t *testing.T) {
	u := startUDPServer(t)
	dead, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.LocalAddr().(*net.UDPAddr)
	_ = dead.Close() // a port this test opened and closed: nobody serves it

	c := newComm(t, func(cfg *conf.Config) { cfg.NetThread = 1 })
	ctx := testCtx(t)
	only := udpProxy(t, c, udpEndpoint(deadAddr))
	for i := range 3 {
		_, err := only.InvokeRaw(ctx, "echo", []byte("x"), servantproxy.WithTimeout(10*time.Second))
		if !errors.Is(err, communicator.ErrConnection) {
			t.Fatalf("call %d to a dead udp port: %v; want a connection error", i, err)
		}
		if i == 0 && !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("call 0 to a dead udp port: %v; want it to say unreachable", err)
		}
	}

	both := udpProxy(t, c, udpEndpoint(deadAddr), udpEndpoint(u.addr))
	var fromLive int
	for i := range 200 {
		_, err := both.InvokeRaw(ctx, "echo", []byte("y"), servantproxy.WithTimeout(100*time.Millisecond))
		if err == nil {
			fromLive++
		}
		if i >= 100 && err != nil {
			t.Fatalf("call %d still fails after 100 calls: %v; the dead endpoint should be out of rotation", i, err)
		}
	}
	deactivated := false
	for _, e := range c.Stats().Endpoints {
		if e.Endpoint == deadAddr.String() && e.Deactivated > 0 {
			deactivated = true
		}
	}
	if !deactivated {
		t.Errorf("the dead udp endpoint was never taken out of rotation: %+v", c.Stats().Endpoints)
	}
	t.Logf("%d of 200 calls answered by the live endpoint", fromLive)
}

// TestUDPFromRegistry: an endpoint the registry lists with istcp 0 is called over udp.
func TestUDPFromRegistry(t *testing.T) {
	u := startUDPServer(t)
	reg := startRegistry(t, "")
	reg.mu.Lock()
	reg.active = []endpointf.EndpointF{{Host: "127.0.0.1", Port: int32(u.addr.Port), Istcp: 0, Timeout: 60000, Groupworkid: -1}}
	reg.mu.Unlock()
	c := newComm(t, registryConf(reg, livenessTimeouts))
	sp, err := c.Proxy(udpServant)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sp.InvokeRaw(testCtx(t), "echo", []byte("via registry"))
	if err != nil || string(got) != "via registry" {
		t.Fatalf("call through the registry: %q, %v", got, err)
	}
	if n := u.calls.Load(); n != 1 {
		t.Fatalf("the udp server saw %d calls, want 1", n)
	}
}

// TestUDPOversizeReply: a reply datagram larger than datagram.MaxSize (possible over IPv6) is
// dropped and counted by the client, whose call times out; the next reply is taken. The peer is
// a raw UDP socket of this test that answers "big" with a 65520-byte reply frame.
func TestUDPOversizeReply(t *testing.T) {
	endToEnd(t)
	peer, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		readDatagrams(peer, func(req *codec.RequestPacket, from net.Addr) {
			rsp := codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID, Buffer: req.Buffer}
			if string(req.Buffer) == "big" {
				for size := 65520; ; size-- { // a body that makes the frame 65520 bytes
					rsp.Buffer = make([]byte, size)
					if len(codec.AppendResponse(nil, &rsp)) == 65520 {
						break
					}
				}
			}
			_, _ = peer.WriteTo(codec.AppendResponse(nil, &rsp), from)
		})
	}()
	t.Cleanup(func() { _ = peer.Close(); <-done })

	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 1 })
	sp := udpProxy(t, c, fmt.Sprintf("udp -h ::1 -p %d", peer.LocalAddr().(*net.UDPAddr).Port))
	ctx := testCtx(t)
	if _, err := sp.InvokeRaw(ctx, "f", []byte("big"), servantproxy.WithTimeout(300*time.Millisecond)); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("call answered by an oversize datagram: %v; want ErrTimeout", err)
	}
	if got, err := sp.InvokeRaw(ctx, "f", []byte("small")); err != nil || string(got) != "small" {
		t.Fatalf("next call: %q, %v", got, err)
	}
	var bad uint64
	for _, e := range c.Stats().Endpoints {
		bad += e.BadDatagrams
	}
	if bad != 1 {
		t.Errorf("client counted %d bad datagrams, want 1", bad)
	}
}
