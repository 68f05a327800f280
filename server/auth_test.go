package server

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
)

// startAuthServer starts an echo server on App.S.Obj that requires authentication with access
// key "ak" and secret "sk".
func startAuthServer(t testing.TB, opts ...Option) string {
	t.Helper()
	keys := func(ak string) (string, bool) { return "sk", ak == "ak" }
	_, addr := startServer(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "echo", echo) },
		append([]Option{WithAuth(keys)}, opts...)...)
	return addr
}

// TestAuthServer: a connection that authenticates first is answered AUTH_SUCC and served; one
// that calls first, or signs with a wrong secret, or names another object, is closed unanswered.
func TestAuthServer(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []Option
	}{{"inline", nil}, {"workers", []Option{WithWorkers(2)}}} {
		t.Run(mode.name, func(t *testing.T) {
			addr := startAuthServer(t, mode.opts...)

			c := dial(t, addr)
			frame, err := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			// The auth request and a call pipelined behind it: both answered, in order.
			c.write(append(frame, codec.AppendRequest(nil, request(7, "App.S.Obj", "echo", []byte("hi")))...))
			f, err := c.readFrame(testTimeout)
			if err != nil {
				t.Fatalf("auth answer: %v", err)
			}
			if err := auth.CheckResponse(f); err != nil {
				t.Fatalf("auth answer: %v", err)
			}
			if rsp := c.recv(); rsp.RequestID != 7 || string(rsp.Buffer) != "hi" {
				t.Fatalf("call after auth: %+v", rsp)
			}

			for _, bad := range []struct {
				name  string
				frame func() []byte
			}{
				{"call before auth", func() []byte {
					return codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", []byte("x")))
				}},
				{"wrong secret", func() []byte {
					f, _ := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "guess"}, time.Now())
					return f
				}},
				{"unknown access key", func() []byte {
					f, _ := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "who", SecretKey: "sk"}, time.Now())
					return f
				}},
				{"unknown servant", func() []byte {
					f, _ := auth.AppendRequest(nil, "App.S.Nope", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
					return f
				}},
				{"clock two hours off", func() []byte {
					f, _ := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now().Add(-2*time.Hour))
					return f
				}},
			} {
				c := dial(t, addr)
				c.write(bad.frame())
				if f, err := c.readFrame(testTimeout); err == nil || !strings.Contains(err.Error(), "EOF") && !isReset(err) {
					t.Fatalf("%s: got frame %x, err %v; want the connection closed unanswered", bad.name, f, err)
				}
			}
		})
	}
}

// TestAuthServerOverTLS: authentication works inside a TLS connection too.
func TestAuthServerOverTLS(t *testing.T) {
	ts := newTLSSetup(t)
	keys := func(ak string) (string, bool) { return "sk", ak == "ak" }
	_, addr, _ := startTLSServer(t, ts, false, WithAuth(keys))
	c := dialTLS(t, addr, clientConfig(t, ts, nil))
	frame, _ := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
	c.write(frame)
	f, err := c.readFrame(testTimeout)
	if err != nil || auth.CheckResponse(f) != nil {
		t.Fatalf("auth over TLS: %x, %v", f, err)
	}
	if rsp := c.call(request(2, "App.S.Obj", "echo", []byte("z"))); string(rsp.Buffer) != "z" {
		t.Fatalf("call: %+v", rsp)
	}
}

// TestAuthWithinHandshakeTimeout: with no idle timeout (the default), a WithAuth server closes a
// connection that sends no whole auth request within the handshake timeout, over tcp (counted
// from its opening) and after a TLS handshake (counted from the handshake's end): one that sends
// nothing, and one that sends the start of a frame and stops. Before, it held them for good, and
// what they had sent. A connection that authenticated in time is served past that time.
func TestAuthWithinHandshakeTimeout(t *testing.T) {
	leakCheck(t)
	ts := newTLSSetup(t)
	keys := func(ak string) (string, bool) { return "sk", ak == "ak" }
	const limit = 300 * time.Millisecond
	authFrame, err := auth.AppendRequest(nil, "App.S.Obj", auth.Credentials{AccessKey: "ak", SecretKey: "sk"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []string{"tcp", "ssl"} {
		t.Run(proto, func(t *testing.T) {
			var dialOne func() *client
			if proto == "ssl" {
				_, addr, _ := startTLSServer(t, ts, false, WithAuth(keys), WithHandshakeTimeout(limit))
				dialOne = func() *client {
					c := dialTLS(t, addr, clientConfig(t, ts, nil))
					if err := c.c.(*tls.Conn).Handshake(); err != nil {
						t.Fatal(err)
					}
					return c
				}
			} else {
				addr := startAuthServer(t, WithHandshakeTimeout(limit))
				dialOne = func() *client { return dial(t, addr) }
			}
			good := dialOne()
			good.write(authFrame)
			if f, err := good.readFrame(testTimeout); err != nil || auth.CheckResponse(f) != nil {
				t.Fatalf("auth answer: %x, %v", f, err)
			}
			silent, partial := dialOne(), dialOne()
			partial.write(authFrame[:len(authFrame)/2])
			silent.expectClosed()
			partial.expectClosed()
			// The authenticated connection, opened before them, is still served.
			if rsp := good.call(request(2, "App.S.Obj", "echo", []byte("still"))); string(rsp.Buffer) != "still" {
				t.Fatalf("call on the authenticated connection: %+v", rsp)
			}
		})
	}
}
