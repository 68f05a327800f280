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
