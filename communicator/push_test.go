package communicator_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const pushServant = "Test.Push.Obj"

// startPusher starts a project server whose Subscribe hands the connection's Pusher to the test,
// with the handlers extra registers besides; t.Cleanup stops it.
func startPusher(t *testing.T, extra ...func(*server.Server) error) (addr string, subs <-chan *server.Pusher) {
	t.Helper()
	endToEnd(t)
	ch := make(chan *server.Pusher, 8)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithNumEventLoop(1))
	if err := s.Handle(pushServant, "Subscribe", func(_ context.Context, cur *server.Current, _, rsp []byte) ([]byte, error) {
		ch <- cur.Pusher()
		return append(rsp, "subscribed"...), nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, h := range extra {
		if err := h(s); err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "push server", s) })
	return a.String(), ch
}

// pushRecorder is a PushCallback that hands every event to the test.
type pushRecorder struct {
	pushes chan *servantproxy.Push
	events chan string // "connect <ep>" or "close <ep>"
}

func newPushRecorder() *pushRecorder {
	return &pushRecorder{pushes: make(chan *servantproxy.Push, 16), events: make(chan string, 16)}
}

func (r *pushRecorder) callback() *servantproxy.PushCallback {
	return &servantproxy.PushCallback{
		OnPush:    func(p *servantproxy.Push) { r.pushes <- p },
		OnConnect: func(ep string) { r.events <- "connect " + ep },
		OnClose:   func(ep string, err error) { r.events <- "close " + ep },
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s\n%s", what, allStacks())
		panic("unreachable")
	}
}

func pushProxy(t *testing.T, comm *communicator.Communicator, addr string) *servantproxy.ServantProxy {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	sp, err := comm.Proxy(pushServant + "@tcp -h " + host + " -p " + port)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func subscribe(t *testing.T, sp *servantproxy.ServantProxy, subs <-chan *server.Pusher) *server.Pusher {
	t.Helper()
	body, err := sp.InvokeRaw(testCtx(t), "Subscribe", nil)
	if err != nil || string(body) != "subscribed" {
		t.Fatalf("Subscribe: %q, %v", body, err)
	}
	return recv(t, subs, "subscription")
}

func onePushThread(c *conf.Config) { c.NetThread, c.AsyncThread, c.KeepAliveInterval = 1, 1, 0 }

// TestPushWithCallback: the server pushes three packets on the connection of a call; the proxy's
// callback gets them, in order (one async worker), with the function, body and endpoint, after
// the connection's open; calls go on as before.
func TestPushWithCallback(t *testing.T) {
	addr, subs := startPusher(t)
	comm := newComm(t, onePushThread)
	sp := pushProxy(t, comm, addr)
	rec := newPushRecorder()
	sp.SetPushCallback(rec.callback())

	pu := subscribe(t, sp, subs)
	if ev := recv(t, rec.events, "connect event"); ev != "connect "+addr {
		t.Fatalf("event %q, want connect %s", ev, addr)
	}
	for i := 1; i <= 3; i++ {
		if err := pu.Push("Tick", []byte(strconv.Itoa(i))); err != nil {
			t.Fatalf("Push %d: %v", i, err)
		}
	}
	for i := 1; i <= 3; i++ {
		p := recv(t, rec.pushes, "push")
		if p.Func != "Tick" || string(p.Body) != strconv.Itoa(i) || p.Endpoint != addr || p.Ret != 0 {
			t.Fatalf("push %d: %+v, want Tick %d from %s", i, p, i, addr)
		}
	}
	subscribe(t, sp, subs) // the connection still serves calls
	select {
	case ev := <-rec.events:
		t.Fatalf("unexpected connection event %q", ev)
	default:
	}
}

// TestPushGeneratedProxy: a generated proxy's SetPushCallback sets the callback of the proxy it
// calls through: the push reaches it.
func TestPushGeneratedProxy(t *testing.T) {
	addr, subs := startPusher(t)
	comm := newComm(t, onePushThread)
	host, port, _ := net.SplitHostPort(addr)
	var gp hellopb.GreeterProxy
	if err := comm.StringToProxy(pushServant+"@tcp -h "+host+" -p "+port, &gp); err != nil {
		t.Fatal(err)
	}
	rec := newPushRecorder()
	gp.SetPushCallback(rec.callback())
	pu := subscribe(t, gp.ServantProxy(), subs)
	if err := pu.Push("Tick", []byte("g")); err != nil {
		t.Fatal(err)
	}
	if p := recv(t, rec.pushes, "push"); p.Func != "Tick" || string(p.Body) != "g" || p.Endpoint != addr {
		t.Fatalf("push %+v, want Tick g from %s", p, addr)
	}
}

// TestPushWithoutCallback: a push to a proxy with no callback is logged and dropped, the
// connection stays up (TarsCpp's client would close it), and a callback set later gets the pushes
// from then on only.
func TestPushWithoutCallback(t *testing.T) {
	addr, subs := startPusher(t)
	core, logs := observer.New(zap.WarnLevel)
	cfg := conf.Default()
	onePushThread(&cfg)
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	sp := pushProxy(t, comm, addr)

	pu := subscribe(t, sp, subs)
	if err := pu.Push("Tick", []byte("lost")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dropped push's warning", func() bool {
		return logs.FilterMessageSnippet("server push dropped").FilterField(zap.String("func", "Tick")).Len() == 1
	})
	again := subscribe(t, sp, subs)
	if again.RemoteAddr().String() != pu.RemoteAddr().String() || pu.Closed() {
		t.Fatalf("after the dropped push the call came from %v (first from %v, closed %v): the connection was replaced",
			again.RemoteAddr(), pu.RemoteAddr(), pu.Closed())
	}
	rec := newPushRecorder()
	sp.SetPushCallback(rec.callback())
	if err := pu.Push("Tick", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if p := recv(t, rec.pushes, "push"); string(p.Body) != "kept" {
		t.Fatalf("first push after SetPushCallback: %q, want kept (the earlier one was dropped)", p.Body)
	}
	var pushes, dropped uint64
	for _, e := range comm.Stats().Endpoints {
		if e.Servant == pushServant {
			pushes += e.Pushes
			dropped += e.PushesDropped
		}
	}
	if pushes != 2 || dropped != 1 {
		t.Errorf("stats count %d pushes, %d dropped; want 2 and 1", pushes, dropped)
	}
}

// TestPushAcrossReconnect: the connection carrying a subscription is cut; the callback hears the
// close, the server's Pusher for it fails with ErrConnClosed, the next call reconnects (a connect
// event), and pushes on the new connection arrive.
func TestPushAcrossReconnect(t *testing.T) {
	addr, subs := startPusher(t)
	fp, err := faultproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fp.Close() })
	comm := newComm(t, onePushThread)
	sp := pushProxy(t, comm, fp.Addr())
	rec := newPushRecorder()
	sp.SetPushCallback(rec.callback())

	first := subscribe(t, sp, subs)
	if ev := recv(t, rec.events, "connect event"); ev != "connect "+fp.Addr() {
		t.Fatalf("event %q, want connect %s", ev, fp.Addr())
	}
	if err := first.Push("Tick", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if p := recv(t, rec.pushes, "push"); string(p.Body) != "a" || p.Endpoint != fp.Addr() {
		t.Fatalf("push %+v, want a from %s", p, fp.Addr())
	}

	if n := fp.Hangup(); n != 1 {
		t.Fatalf("hung up %d connections, want 1", n)
	}
	if ev := recv(t, rec.events, "close event"); ev != "close "+fp.Addr() {
		t.Fatalf("event %q, want close %s", ev, fp.Addr())
	}
	waitFor(t, "the server to see the close", first.Closed)
	if err := first.Push("Tick", []byte("lost")); !errors.Is(err, server.ErrConnClosed) {
		t.Fatalf("Push on the closed connection: %v, want ErrConnClosed", err)
	}

	second := subscribe(t, sp, subs)
	if ev := recv(t, rec.events, "connect event"); ev != "connect "+fp.Addr() {
		t.Fatalf("event %q, want connect %s", ev, fp.Addr())
	}
	if second.RemoteAddr().String() == first.RemoteAddr().String() {
		t.Fatal("the second subscription came on the first connection")
	}
	if err := second.Push("Tick", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if p := recv(t, rec.pushes, "push"); string(p.Body) != "b" {
		t.Fatalf("push after the reconnect: %q, want b", p.Body)
	}
}

// TestPushReconnectPacketIsNotAPush: TarsGo's `_reconnect_` packet also has request id 0, but it
// is not a push: it is neither handed to the callback nor warned about as a dropped push. A raw
// peer answers each call with `_reconnect_`, then a push "Tick", then the reply.
func TestPushReconnectPacketIsNotAPush(t *testing.T) {
	endToEnd(t)
	ln := listenLoopback(t)
	serveRaw(t, ln, func(_ int64, c net.Conn) {
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			var out []byte
			out = codec.AppendResponse(out, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: codec.PushRequestID, ResultDesc: codec.ReconnectDesc})
			out = codec.AppendResponse(out, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: codec.PushRequestID,
				Buffer: []byte("t"), Status: map[string]string{"TARS_FUNC": "Tick"}})
			out = codec.AppendResponse(out, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: req.RequestID, Buffer: []byte("subscribed")})
			_, err := c.Write(out)
			return err == nil
		})
	})
	core, logs := observer.New(zap.WarnLevel)
	cfg := conf.Default()
	onePushThread(&cfg)
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	sp := pushProxy(t, comm, ln.Addr().String())

	call := func() {
		t.Helper()
		if body, err := sp.InvokeRaw(testCtx(t), "Subscribe", nil); err != nil || string(body) != "subscribed" {
			t.Fatalf("Subscribe: %q, %v", body, err)
		}
	}
	call() // no callback: the Tick push is dropped with a warning, `_reconnect_` silently
	dropped := logs.FilterMessageSnippet("server push dropped")
	if dropped.Len() != 1 || dropped.All()[0].ContextMap()["func"] != "Tick" {
		t.Fatalf("dropped-push warnings: %v, want one, for Tick", dropped.All())
	}
	rec := newPushRecorder()
	sp.SetPushCallback(rec.callback())
	call()
	call()
	for i := range 2 {
		if p := recv(t, rec.pushes, "push"); p.Func != "Tick" || string(p.Body) != "t" {
			t.Fatalf("push %d: %+v, want Tick (the `_reconnect_` packet is not a push)", i, p)
		}
	}
}
