package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// startAuthGreeter starts a greeter that requires TARS authentication with access key "app"
// and secret "s3cret"; with p set, over TLS too.
func startAuthGreeter(t *testing.T, id string, p *tlsPKI) *greeter {
	t.Helper()
	keys := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	if p != nil {
		g := startTLSGreeter(t, p, id, tlsServerOpt{pair: p.server, authKeys: keys})
		return g
	}
	g := &greeter{id: id, release: make(chan struct{})}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1), server.WithAuth(keys))
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.srv, g.addr = s, a.String()
	t.Cleanup(func() { g.stop(t) })
	return g
}

// authProxy binds obj to addr with "-e 1", as tcp or ssl.
func authProxy(t *testing.T, c *communicator.Communicator, obj, proto, addr string) *servantproxy.ServantProxy {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	sp, err := c.Proxy(fmt.Sprintf("%s@%s -h %s -p %s -e 1", obj, proto, host, port))
	if err != nil {
		if strings.Contains(err.Error(), "only tcp is supported") {
			t.Fatalf("the communicator refuses ssl endpoints: %v", err)
		}
		t.Fatal(err)
	}
	return sp
}

// TestAuthCalls: a client with the right accesskey and secretkey is served over tcp and ssl
// endpoints with -e 1; with a wrong secret its calls fail within connect-timeout with ErrAuth,
// and the error names the endpoint.
func TestAuthCalls(t *testing.T) {
	p := newTLSPKI(t)
	for _, proto := range []string{"tcp", "ssl"} {
		t.Run(proto, func(t *testing.T) {
			var g *greeter
			if proto == "ssl" {
				g = startAuthGreeter(t, "auth-"+proto, p)
			} else {
				g = startAuthGreeter(t, "auth-"+proto, nil)
			}
			ctx := testCtx(t)
			good := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
			sp := authProxy(t, good, servant, proto, g.addr)
			for i := range uint64(10) {
				for _, kind := range []callKind{syncCall, asyncCall, onewayCall} {
					if err := callOnce(t, ctx, kind, sp, i, 10*time.Second); err != nil {
						t.Fatalf("%s call %d: %v", kind, i, err)
					}
				}
			}

			bad := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "guess"`), nil)
			start := time.Now()
			_, err := sayHello(ctx, authProxy(t, bad, servant, proto, g.addr), "x", 1)
			t.Log(err)
			if !errors.Is(err, auth.ErrAuth) || !errors.Is(err, communicator.ErrConnection) {
				t.Fatalf("wrong secret: %v, want ErrAuth and ErrConnection", err)
			}
			if !strings.Contains(err.Error(), g.addr) || !strings.Contains(err.Error(), "refused access key") {
				t.Fatalf("wrong secret: error %q does not name the endpoint and the refusal", err)
			}
			within(t, "the refused call", time.Since(start), quick)
		})
	}
}

// TestAuthPerServant: a servant's own credentials replace the communicator's; a servant
// without any fails with an error saying what to configure.
func TestAuthPerServant(t *testing.T) {
	g := startAuthGreeter(t, "auth", nil)
	ctx := testCtx(t)
	c := tlsComm(t, `[servant."`+servant+`"]`+"\naccesskey = \"app\"\nsecretkey = \"s3cret\"\n", nil)
	if _, err := sayHello(ctx, authProxy(t, c, servant, "tcp", g.addr), "x", 1); err != nil {
		t.Fatalf("servant with credentials: %v", err)
	}
	_, err := sayHello(ctx, authProxy(t, c, "Test.Server.OtherObj", "tcp", g.addr), "x", 1)
	if !errors.Is(err, auth.ErrAuth) || !strings.Contains(err.Error(), "no accesskey and secretkey") {
		t.Fatalf("servant without credentials: %v", err)
	}
}

// TestAuthStalled: a server that accepts and never answers the auth request: calls waiting
// for the handshake end by their own deadlines (ErrTimeout), and the connect by connect-timeout.
func TestAuthStalled(t *testing.T) {
	hold := startHold(t)
	c := tlsComm(t, "accesskey = \"app\"\nsecretkey = \"s3cret\"\n", func(cfg *conf.Config) { cfg.ConnectTimeout = 600 * time.Millisecond })
	sp := authProxy(t, c, servant, "tcp", hold.ln.Addr().String())
	ctx := testCtx(t)
	start := time.Now()
	_, err := sayHello(ctx, sp, "x", 1, servantproxy.WithTimeout(100*time.Millisecond))
	if !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("call with a 100ms deadline during a stalled auth: %v, want ErrTimeout", err)
	}
	checkTook(t, "call during a stalled auth", time.Since(start), 100*time.Millisecond, 600*time.Millisecond)
	start = time.Now()
	_, err = sayHello(ctx, sp, "x", 2, servantproxy.WithTimeout(5*time.Second))
	if !errors.Is(err, auth.ErrAuth) || !strings.Contains(err.Error(), "no answer to the auth request") {
		t.Fatalf("call outliving the connect timeout: %v, want ErrAuth saying no answer", err)
	}
	within(t, "the stalled auth (within connect-timeout)", time.Since(start), 600*time.Millisecond+time.Second)
}

// TestTLSAuthRefusedCertIsTLS: an ssl -e 1 endpoint whose TLS 1.3 server requires a client
// certificate, called by a client without one. The server refuses the certificate (alert
// certificate_required) after the client's handshake completed, while the client reads the auth
// answer: the error matches ErrTLS, as a refused client certificate does without -e 1, and not
// ErrAuth (it blamed the access key).
func TestTLSAuthRefusedCertIsTLS(t *testing.T) {
	p := newTLSPKI(t)
	keys := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	g := startTLSGreeter(t, p, "mtls-auth", tlsServerOpt{pair: p.server, mutual: true, authKeys: keys})
	c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
	sp := authProxy(t, c, servant, "ssl", g.addr)
	_, err := sayHello(testCtx(t), sp, "nocert", 1)
	t.Log(err)
	if err == nil {
		t.Fatal("call without a client certificate succeeded")
	}
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("%v: want ErrConnection", err)
	}
	if !errors.Is(err, tlsconn.ErrTLS) {
		t.Errorf("refused client certificate: %v\nwant errors.Is(err, ErrTLS) (README: a refused client certificate matches ErrTLS); ErrAuth=%v",
			err, errors.Is(err, auth.ErrAuth))
	}
	if errors.Is(err, auth.ErrAuth) {
		t.Errorf("refused client certificate reported as an authentication failure (ErrAuth): %v", err)
	}
}

// startAuthLimited starts a greeter requiring authentication (app/s3cret), over TLS when
// p is set, that closes a connection whose replies to one read exceed 1 KiB (WithMaxBacklog): a
// call with a larger name closes it. (A request above the server's max-packet-size no longer
// does: it is answered -1.)
func startAuthLimited(t *testing.T, id string, p *tlsPKI) string {
	t.Helper()
	keys := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	opts := []server.Option{server.WithLogger(zaptest.NewLogger(t).Named("server-" + id)), server.WithNumEventLoop(1),
		server.WithAuth(keys), server.WithMaxBacklog(1024)}
	if p != nil {
		cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: p.server.Cert, Key: p.server.Key}, false)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, server.WithTLS(cfg))
	}
	s := server.New(opts...)
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return a.String()
}

// TestTLSAuthHeard: on a -e 1 connection the server has answered the auth request (AUTH_SUCC, a
// TARS frame) before any call is written. When that server then closes the connection (here:
// the first call's reply is over its backlog cap), the error must not claim the peer never sent a
// byte: over tcp it said it was probably a TLS server ("declare it ssl"), over ssl that it was a
// TLS failure (ErrTLS), probably a refused client certificate.
func TestTLSAuthHeard(t *testing.T) {
	p := newTLSPKI(t)
	big := strings.Repeat("x", 4096)
	for _, proto := range []string{"tcp", "ssl"} {
		t.Run(proto, func(t *testing.T) {
			var addr string
			if proto == "ssl" {
				addr = startAuthLimited(t, "lim-"+proto, p)
			} else {
				addr = startAuthLimited(t, "lim-"+proto, nil)
			}
			c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
			sp := authProxy(t, c, servant, proto, addr)
			_, err := sayHello(testCtx(t), sp, big, 1)
			t.Log(err)
			if err == nil {
				t.Fatal("an oversized request succeeded")
			}
			if !errors.Is(err, communicator.ErrConnection) {
				t.Fatalf("%v: want ErrConnection", err)
			}
			if strings.Contains(err.Error(), "without sending a byte") || strings.Contains(err.Error(), "without sending anything") {
				t.Errorf("error claims the peer sent nothing, though it answered the auth request: %v", err)
			}
			if errors.Is(err, tlsconn.ErrTLS) {
				t.Errorf("a server closing an authenticated connection is reported as a TLS failure: %v", err)
			}
		})
	}
}

// TestTLSAuthTCPToTLSServer: an endpoint that speaks TLS declared "tcp -e 1" by mistake. Without
// -e 1 the error says what happened ("a TLS server does that to a plain TCP client ... declare it
// ssl"); with -e 1 the TLS server hangs up on the auth request, and the error must mention TLS
// too, not only the access key.
func TestTLSAuthTCPToTLSServer(t *testing.T) {
	p := newTLSPKI(t)
	keys := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	g := startTLSGreeter(t, p, "tls-auth", tlsServerOpt{pair: p.server, authKeys: keys})
	c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
	_, err := sayHello(testCtx(t), authProxy(t, c, servant, "tcp", g.addr), "x", 1)
	t.Log(err)
	if err == nil {
		t.Fatal("a plain TCP call to a TLS server succeeded")
	}
	if !strings.Contains(err.Error(), "ssl") && !strings.Contains(err.Error(), "TLS") {
		t.Errorf("right credentials, endpoint declared tcp for a TLS server: the error does not mention TLS/ssl: %v", err)
	}
}
