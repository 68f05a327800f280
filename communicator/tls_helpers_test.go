package communicator_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// tlsPKI is a CA with certificates for the tests: a server certificate for 127.0.0.1 and
// localhost, an expired one, one for another host, a client certificate, and a second CA.
type tlsPKI struct {
	ca, other                        *tlstest.CA
	server, expired, elsewhere, user tlstest.Pair
}

func newTLSPKI(t *testing.T) *tlsPKI {
	p := &tlsPKI{ca: tlstest.NewCA(t, "ca"), other: tlstest.NewCA(t, "other")}
	p.server = p.ca.Issue(t, tlstest.Leaf{Name: "server"})
	p.expired = p.ca.Issue(t, tlstest.Leaf{Name: "expired", Expired: true})
	p.elsewhere = p.ca.Issue(t, tlstest.Leaf{Name: "elsewhere", DNS: []string{"elsewhere.example"}, IPs: []net.IP{net.IPv4(10, 9, 8, 7)}})
	p.user = p.ca.Issue(t, tlstest.Leaf{Name: "user", Client: true})
	return p
}

// tlsServerOpt says how to run a TLS greeter.
type tlsServerOpt struct {
	pair       tlstest.Pair                // the server's certificate
	mutual     bool                        // require a client certificate signed by the CA
	maxVersion uint16                      // 0: TLS 1.3
	block      bool                        // SayHello blocks until the server stops
	authKeys   func(string) (string, bool) // with server.WithAuth
	workers    bool                        // handlers on workers, so the loop answers pings while one runs
	// short answers with the name's length instead of the name ("4194304@id"): an upload's
	// reply is a few bytes.
	short bool
}

// startTLSGreeter starts a project server with TLS answering SayHello like startGreeter's.
func startTLSGreeter(t *testing.T, p *tlsPKI, id string, o tlsServerOpt) *greeter {
	t.Helper()
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: p.ca.File, Cert: o.pair.Cert, Key: o.pair.Key}, o.mutual)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxVersion = o.maxVersion
	g := &greeter{id: id, release: make(chan struct{})}
	opts := []server.Option{server.WithLogger(zaptest.NewLogger(t).Named("server-" + id)), server.WithNumEventLoop(1), server.WithTLS(cfg)}
	if o.block || o.workers {
		opts = append(opts, server.WithWorkers(16))
	}
	if o.authKeys != nil {
		opts = append(opts, server.WithAuth(o.authKeys))
	}
	s := server.New(opts...)
	err = server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if o.block {
			stop, release := stopped(ctx, false)
			defer release()
			select {
			case <-g.release:
			case <-stop:
				return nil, ctx.Err()
			}
		}
		if o.short {
			return &hellopb.HelloReply{Message: strconv.Itoa(len(req.GetName())) + "@" + id, Seq: req.GetSeq()}, nil
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start TLS server %s: %v", id, err)
	}
	g.srv, g.addr = s, a.String()
	t.Cleanup(func() { g.stop(t) })
	return g
}

// sslEndpoint is addr as an ssl endpoint.
func sslEndpoint(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("ssl -h %s -p %s", host, port)
}

// tlsComm starts a Communicator from the TOML text toml (over a 1-thread, 10ms-tick
// configuration). It skips the test if this build of conf or communicator does not know the
// TLS keys or ssl endpoints yet.
func tlsComm(t *testing.T, toml string, edit func(*conf.Config)) *communicator.Communicator {
	t.Helper()
	cfg, err := conf.Parse([]byte(toml))
	if err != nil {
		if strings.Contains(err.Error(), "unknown key") {
			t.Fatalf("conf does not have the TLS keys yet: %v", err)
		}
		t.Fatal(err)
	}
	faultConf(edit)(&cfg)
	endToEnd(t)
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, c) })
	return c
}

// sslProxy binds a ServantProxy of obj to addrs as ssl endpoints.
func sslProxy(t *testing.T, c *communicator.Communicator, obj string, addrs ...string) *servantproxy.ServantProxy {
	t.Helper()
	eps := make([]string, len(addrs))
	for i, a := range addrs {
		eps[i] = sslEndpoint(a)
	}
	sp, err := c.Proxy(obj + "@" + strings.Join(eps, ":"))
	if err != nil {
		if strings.Contains(err.Error(), "only tcp is supported") {
			t.Fatalf("the communicator refuses ssl endpoints: %v", err)
		}
		t.Fatal(err)
	}
	return sp
}

// holdListener accepts TCP connections and never answers them: a TLS handshake with it stalls.
type holdListener struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func startHold(t *testing.T) *holdListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &holdListener{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-h.done
		h.mu.Lock()
		for _, c := range h.conns {
			_ = c.Close()
		}
		h.mu.Unlock()
	})
	return h
}

// deafTLS is a TLS server that completes handshakes and then never reads: its clients'
// bytes pile up.
func startDeafTLS(t *testing.T, p *tlsPKI) string {
	t.Helper()
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: p.server.Cert, Key: p.server.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).HandshakeContext(context.Background())
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// tomlTLS is the configuration text trusting ca, with extra lines appended.
func tomlTLS(ca string, extra ...string) string {
	return fmt.Sprintf("ca = %q\nconnect-timeout = \"1s\"\n", ca) + strings.Join(extra, "\n") + "\n"
}

// quick bounds calls expected to fail at once.
const quick = 2 * time.Second
