package server

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
)

// fuzzSeeds are FuzzServerTLSInput's and FuzzServerAuthInput's seeds: a request, a truncated
// frame, a too-short length, an auth request and an auth request followed by a call.
func fuzzSeeds(f *testing.F) {
	f.Helper()
	f.Add(codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", []byte("x"))))
	f.Add([]byte{0, 0, 0, 5, 0xff})
	f.Add([]byte{0, 0, 0, 4})
	a, err := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(a)
	f.Add(append(a, codec.AppendRequest(nil, request(2, "App.S.Obj", "echo", []byte("y")))...))
}

// FuzzServerTLSInput is FuzzServerInput through TLS: the bytes arrive in TLS records, from a
// client that completed the handshake, and go through the server's TLS layer on its event loop.
// The server must neither panic nor stop serving the connection kept beside.
func FuzzServerTLSInput(f *testing.F) {
	fuzzSeeds(f)
	ts := newTLSSetup(f)
	_, addr, _ := startTLSServer(f, ts, false)
	cfg := clientConfig(f, ts, nil)
	fuzzServing(f, dialTLS(f, addr, cfg), "App.S.Obj", "echo", func(t *testing.T) (*client, net.Conn) {
		c := dialTLS(t, addr, cfg)
		return c, c.c.(*tls.Conn).NetConn()
	})
}

// FuzzServerAuthInput is FuzzServerInput to a server that requires TARS authentication: the
// bytes are a connection's first (an auth request, garbage, a call before any auth), and the
// server must neither panic nor stop serving the authenticated connection kept beside.
func FuzzServerAuthInput(f *testing.F) {
	fuzzSeeds(f)
	addr := startAuthServer(f)
	alive := dial(f, addr)
	frame, err := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	alive.write(frame)
	answer, err := alive.readFrame(testTimeout)
	if err == nil {
		err = auth.CheckResponse(answer)
	}
	if err != nil {
		f.Fatalf("the kept connection did not authenticate: %v", err)
	}
	fuzzServing(f, alive, "App.S.Obj", "echo", func(t *testing.T) (*client, net.Conn) {
		c := dial(t, addr)
		return c, c.c
	})
}

// fuzzServing runs f's inputs: each is written on a new connection that open makes (returning
// its client and its TCP connection), which is then reset (linger 0, so that tens of thousands
// of inputs do not exhaust ephemeral ports with TIME_WAIT sockets); after each, alive, a
// connection kept open beside, must still get servant's echo function answered.
func fuzzServing(f *testing.F, alive *client, servant, fn string, open func(t *testing.T) (*client, net.Conn)) {
	var id int32
	f.Fuzz(func(t *testing.T, data []byte) {
		c, tcp := open(t)
		c.write(data)
		_ = tcp.(*net.TCPConn).SetLinger(0)
		_ = tcp.Close()
		id++
		alive.t = t
		if rsp := alive.call(request(id, servant, fn, []byte("alive"))); string(rsp.Buffer) != "alive" {
			t.Fatalf("server after input %x: body %q", data, rsp.Buffer)
		}
	})
}

// FuzzServerUDPInput is FuzzServerInput over udp: each input is one datagram to a udp server
// (from a socket of its own, whose replies nobody reads), which must neither panic nor stop
// answering the requests of another socket.
func FuzzServerUDPInput(f *testing.F) {
	fuzzSeeds(f)
	_, alive := startUDP(f, func(s *Server) { mustHandle(f, s, "App.S.Obj", "echo", echo) })
	garbage, err := net.DialUDP("udp", nil, alive.RemoteAddr().(*net.UDPAddr))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = garbage.Close() })
	var id int32
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = garbage.Write(data) // a datagram too large to send is an input the server never sees
		id++
		if rsp := callUDP(t, alive, request(id, "App.S.Obj", "echo", []byte("alive"))); string(rsp.Buffer) != "alive" {
			t.Fatalf("server after datagram %x: body %q", data, rsp.Buffer)
		}
	})
}
