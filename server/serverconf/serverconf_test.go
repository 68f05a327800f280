package serverconf_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/server/serverconf"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// closeLimit bounds every Close and Stop of a test (a liveness bound, not a speed claim).
const closeLimit = 10 * time.Second

// within runs close, failing the test with the goroutine dump if it does not return in time.
func within(t *testing.T, what string, close func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(closeLimit):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s did not return within %v; goroutines:\n%s", what, closeLimit, buf[:runtime.Stack(buf, true)])
		return nil
	}
}

// start builds the servers of toml, lets register add handlers, starts them, and stops them at
// the end of the test.
func start(t *testing.T, toml string, register func(*serverconf.Servers)) *serverconf.Servers {
	t.Helper()
	cfg, err := conf.Parse([]byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	srvs, err := serverconf.New(cfg.Server)
	if err != nil {
		t.Fatal(err)
	}
	register(srvs)
	if err := srvs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := within(t, "Servers.Stop", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srvs.Stop(ctx)
		}); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return srvs
}

// echo registers an echo function on servant's server, answering with the servant's name first.
func echo(t *testing.T, srvs *serverconf.Servers, servant string) {
	t.Helper()
	s := srvs.Server(servant)
	if s == nil {
		t.Fatalf("no server for %s", servant)
	}
	if err := s.Handle(servant, "echo", func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		return append(append(rsp, cur.Servant+":"...), req...), nil
	}); err != nil {
		t.Fatal(err)
	}
}

// client starts a Communicator configured by toml (client keys), closed at the end of the test.
func client(t *testing.T, toml string) *communicator.Communicator {
	t.Helper()
	cfg, err := conf.Parse([]byte("log-level = \"error\"\n" + toml)) // the refused connects are expected
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := within(t, "Communicator.Close", comm.Close); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return comm
}

// call calls servant.echo at srvs's endpoint of it through comm.
func call(t *testing.T, comm *communicator.Communicator, srvs *serverconf.Servers, servant, body string) (string, error) {
	t.Helper()
	ep, ok := srvs.Endpoint(servant)
	if !ok {
		t.Fatalf("no endpoint for %s", servant)
	}
	sp, err := comm.Proxy(servant + "@" + ep.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rsp, err := sp.InvokeRaw(ctx, "echo", []byte(body))
	return string(rsp), err
}

// TestAdaptersServe: two adapters on free ports each serve their own servant, and only it.
func TestAdaptersServe(t *testing.T) {
	srvs := start(t, `
[server]
netthread = 2
[[server.adapter]]
servant = "App.S.AObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
[[server.adapter]]
servant = "App.S.BObj"
endpoint = "tcp -h 127.0.0.1 -p 0 -t 60000"
threads = 2
`, func(s *serverconf.Servers) {
		echo(t, s, "App.S.AObj")
		echo(t, s, "App.S.BObj")
	})
	a, _ := srvs.Endpoint("App.S.AObj")
	b, _ := srvs.Endpoint("App.S.BObj")
	if a.Port == 0 || b.Port == 0 || a.Port == b.Port {
		t.Fatalf("bound endpoints %v and %v: want two distinct ports", a, b)
	}
	comm := client(t, "")
	for _, servant := range []string{"App.S.AObj", "App.S.BObj"} {
		got, err := call(t, comm, srvs, servant, "hi")
		if err != nil || got != servant+":hi" {
			t.Errorf("%s.echo = %q, %v; want %q", servant, got, err, servant+":hi")
		}
	}
	// B's port serves only B: A called there is an unknown servant (-4).
	sp, err := comm.Proxy("App.S.AObj@" + b.String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = sp.InvokeRaw(context.Background(), "echo", nil)
	if se, ok := errors.AsType[*communicator.ServerError](err); !ok || se.Code != -4 {
		t.Errorf("App.S.AObj at B's port: %v; want a ServerError -4", err)
	}
}

// TestStartTwice: a second Start fails with server.ErrStarted and leaves the running servers
// alone (it used to stop them all, as if a later adapter had failed to bind).
func TestStartTwice(t *testing.T) {
	srvs := start(t, `
[[server.adapter]]
servant = "App.S.AObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
`, func(s *serverconf.Servers) { echo(t, s, "App.S.AObj") })
	if err := srvs.Start(); !errors.Is(err, server.ErrStarted) {
		t.Errorf("second Start: %v, want server.ErrStarted", err)
	}
	comm := client(t, "")
	if got, err := call(t, comm, srvs, "App.S.AObj", "hi"); err != nil || got != "App.S.AObj:hi" {
		t.Fatalf("after a second Start: %q, %v; want the running server's reply", got, err)
	}
}

// TestUDPAdapter: a udp adapter serves its servant over udp, inline and with threads; its
// endpoint after Start carries the port bound.
func TestUDPAdapter(t *testing.T) {
	srvs := start(t, `
[[server.adapter]]
servant = "App.S.UDPObj"
endpoint = "udp -h 127.0.0.1 -p 0"
[[server.adapter]]
servant = "App.S.UDPThreadsObj"
endpoint = "udp -h 127.0.0.1 -p 0"
threads = 2
`, func(s *serverconf.Servers) {
		echo(t, s, "App.S.UDPObj")
		echo(t, s, "App.S.UDPThreadsObj")
	})
	comm := client(t, "")
	for _, servant := range []string{"App.S.UDPObj", "App.S.UDPThreadsObj"} {
		ep, _ := srvs.Endpoint(servant)
		if ep.Proto != endpoint.UDP || ep.Port == 0 {
			t.Fatalf("%s endpoint %v: want udp with the bound port", servant, ep)
		}
		got, err := call(t, comm, srvs, servant, "over udp")
		if err != nil || got != servant+":over udp" {
			t.Errorf("%s.echo = %q, %v", servant, got, err)
		}
	}
}

// TestThreadsAndQueueCap: threads = 1 runs handlers off the loop (a blocked handler does not
// stall the connection), and queuecap = 1 answers the request beyond the queue with -9.
func TestThreadsAndQueueCap(t *testing.T) {
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	srvs := start(t, `
[[server.adapter]]
servant = "App.S.SlowObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
threads = 1
queuecap = 1
`, func(s *serverconf.Servers) {
		srv := s.Server("App.S.SlowObj")
		if err := srv.Handle("App.S.SlowObj", "block", func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
			entered <- struct{}{}
			<-release
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		echo(t, s, "App.S.SlowObj")
	})
	comm := client(t, "")
	ep, _ := srvs.Endpoint("App.S.SlowObj")
	sp, err := comm.Proxy("App.S.SlowObj@" + ep.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	results := make(chan error, 4)
	blockCall := func() {
		_, err := sp.InvokeRaw(ctx, "block", nil)
		results <- err
	}
	go blockCall()
	<-entered // the only handler goroutine is blocked
	// Three more: one waits in the queue (capacity 1), two find it full and are answered -9 at
	// once, while the loop keeps reading the connection.
	for range 3 {
		go blockCall()
	}
	overloaded := 0
	for overloaded < 2 {
		err := <-results
		se, ok := errors.AsType[*communicator.ServerError](err)
		if !ok || se.Code != -9 {
			t.Fatalf("while the handler is blocked: %v; want a ServerError -9 (queue full)", err)
		}
		overloaded++
	}
	close(release)
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("the running and the queued call: %v; want both to succeed", err)
		}
	}
	if got, err := call(t, comm, srvs, "App.S.SlowObj", "after"); err != nil || got != "App.S.SlowObj:after" {
		t.Errorf("echo after: %q, %v", got, err)
	}
}

// tlsFiles is a CA with a server certificate for 127.0.0.1 and a client certificate.
type tlsFiles struct {
	ca             *tlstest.CA
	server, client tlstest.Pair
}

func newTLSFiles(t *testing.T) tlsFiles {
	ca := tlstest.NewCA(t, "ca")
	return tlsFiles{ca: ca, server: ca.Issue(t, tlstest.Leaf{Name: "server"}),
		client: ca.Issue(t, tlstest.Leaf{Name: "client", Client: true})}
}

// TestMutualTLS: an ssl adapter with the [server]'s cert and key and verifyclient serves a client
// with a certificate of the CA, and refuses one without.
func TestMutualTLS(t *testing.T) {
	f := newTLSFiles(t)
	srvs := start(t, fmt.Sprintf(`
[server]
cert = %q
key = %q
ca = %q
verifyclient = true
[[server.adapter]]
servant = "App.S.TLSObj"
endpoint = "ssl -h 127.0.0.1 -p 0"
`, f.server.Cert, f.server.Key, f.ca.File), func(s *serverconf.Servers) { echo(t, s, "App.S.TLSObj") })

	with := client(t, fmt.Sprintf("ca = %q\ncert = %q\nkey = %q\n", f.ca.File, f.client.Cert, f.client.Key))
	if got, err := call(t, with, srvs, "App.S.TLSObj", "tls"); err != nil || got != "App.S.TLSObj:tls" {
		t.Errorf("with a client certificate: %q, %v", got, err)
	}
	without := client(t, fmt.Sprintf("ca = %q\n", f.ca.File))
	if _, err := call(t, without, srvs, "App.S.TLSObj", "tls"); !errors.Is(err, communicator.ErrTLS) {
		t.Errorf("without a client certificate: %v; want ErrTLS", err)
	}
}

// handshake connects to addr with cfg and returns the negotiated state.
func handshake(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.ConnectionState(), nil
}

// TestServerTLSVersions: each adapter's tls-min-version and tls-ciphers (over the [server]'s cert
// and key) are what its server negotiates.
func TestServerTLSVersions(t *testing.T) {
	f := newTLSFiles(t)
	srvs := start(t, fmt.Sprintf(`
[server]
cert = %q
key = %q
[[server.adapter]]
servant = "App.S.OldObj"
endpoint = "ssl -h 127.0.0.1 -p 0"
tls-ciphers = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
[[server.adapter]]
servant = "App.S.NewObj"
endpoint = "ssl -h 127.0.0.1 -p 0"
tls-min-version = "1.3"
`, f.server.Cert, f.server.Key), func(s *serverconf.Servers) {
		echo(t, s, "App.S.OldObj")
		echo(t, s, "App.S.NewObj")
	})
	old, _ := srvs.Endpoint("App.S.OldObj")
	nw, _ := srvs.Endpoint("App.S.NewObj")
	roots := newPool(f.ca.Cert)
	tls12 := func(suite uint16) *tls.Config {
		return &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}
	}
	st, err := handshake(old.Addr(), tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256))
	if err != nil || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Errorf("TLS 1.2 with the configured suite: %v, suite %s", err, tls.CipherSuiteName(st.CipherSuite))
	}
	if _, err := handshake(old.Addr(), tls12(tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)); err == nil {
		t.Error("TLS 1.2 with a suite not in tls-ciphers: handshake succeeded")
	}
	if _, err := handshake(nw.Addr(), tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)); err == nil {
		t.Error("TLS 1.2 against tls-min-version = 1.3: handshake succeeded")
	}
	st, err = handshake(nw.Addr(), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil || st.Version != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 against tls-min-version = 1.3: %v, version %x", err, st.Version)
	}
}

// TestClientTLSVersions: the client's tls-min-version and tls-ciphers, at the top level and per
// servant, are what it offers: against a server that speaks only TLS 1.2 with one suite, the
// client connects with that suite or its defaults, and fails with ErrTLS with another suite or
// with tls-min-version = "1.3".
func TestClientTLSVersions(t *testing.T) {
	f := newTLSFiles(t)
	cert, err := tls.LoadX509KeyPair(f.server.Cert, f.server.Key)
	if err != nil {
		t.Fatal(err)
	}
	const servant = "App.S.Obj12"
	srv := server.New(server.WithNumEventLoop(1), server.WithTLS(&tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	}))
	if err := srv.Handle(servant, "echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = within(t, "Server.Stop", func() error { return srv.Stop(context.Background()) })
	})
	proxy := fmt.Sprintf("%s@ssl -h 127.0.0.1 -p %d", servant, addr.(*net.TCPAddr).Port)
	const (
		aes    = `"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"`
		chacha = `"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"`
	)
	for _, tc := range []struct {
		name, toml string
		ok         bool
	}{
		{"the server's suite", "tls-ciphers = " + aes, true},
		{"default suites", "", true},
		{"another suite", "tls-ciphers = " + chacha, false},
		{"two suites, one shared", "tls-ciphers = " + `"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"`, true},
		{"min version 1.3", `tls-min-version = "1.3"`, false},
		{"servant overrides a good top level", "tls-ciphers = " + aes + "\n[servant.\"" + servant + "\"]\ntls-ciphers = " + chacha, false},
		{"servant overrides a bad top level", "tls-ciphers = " + chacha + "\n[servant.\"" + servant + "\"]\ntls-ciphers = " + aes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comm := client(t, fmt.Sprintf("ca = %q\nserver-name = \"127.0.0.1\"\n%s\n", f.ca.File, tc.toml))
			sp, err := comm.Proxy(proxy)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			got, err := sp.InvokeRaw(ctx, "echo", []byte("v"))
			switch {
			case tc.ok && (err != nil || string(got) != "v"):
				t.Errorf("%q, %v; want the echo", got, err)
			case !tc.ok && !errors.Is(err, communicator.ErrTLS):
				t.Errorf("%q, %v; want ErrTLS", got, err)
			}
		})
	}
}

// TestAuth: an adapter with -e 1 admits a client with its access and secret key and refuses one
// with a wrong secret.
func TestAuth(t *testing.T) {
	srvs := start(t, `
[[server.adapter]]
servant = "App.S.AuthObj"
endpoint = "tcp -h 127.0.0.1 -p 0 -e 1"
accesskey = "ak"
secretkey = "sk"
`, func(s *serverconf.Servers) { echo(t, s, "App.S.AuthObj") })
	good := client(t, "accesskey = \"ak\"\nsecretkey = \"sk\"\n")
	if got, err := call(t, good, srvs, "App.S.AuthObj", "a"); err != nil || got != "App.S.AuthObj:a" {
		t.Errorf("right keys: %q, %v", got, err)
	}
	bad := client(t, "accesskey = \"ak\"\nsecretkey = \"wrong\"\n")
	if _, err := call(t, bad, srvs, "App.S.AuthObj", "a"); !errors.Is(err, communicator.ErrAuth) {
		t.Errorf("wrong secret: %v; want ErrAuth", err)
	}
}

// TestErrors: bad values fail Parse or New with an error naming the key.
func TestErrors(t *testing.T) {
	f := newTLSFiles(t)
	files := fmt.Sprintf("cert = %q\nkey = %q\n", f.server.Cert, f.server.Key)
	for _, tc := range []struct{ name, toml, want string }{
		{"unknown cipher", "[server]\ntls-ciphers = \"TLS_NOPE\"", "conf: server.tls-ciphers: TLS_NOPE: unknown cipher suite"},
		{"insecure cipher", "tls-ciphers = \"TLS_RSA_WITH_RC4_128_SHA\"", "conf: tls-ciphers: TLS_RSA_WITH_RC4_128_SHA: an insecure cipher suite"},
		{"TLS 1.3 suite", "[servant.\"A.B.C\"]\ntls-ciphers = \"TLS_AES_128_GCM_SHA256\"", `conf: servant."A.B.C".tls-ciphers: TLS_AES_128_GCM_SHA256: a TLS 1.3 suite`},
		{"suites with 1.3", "tls-min-version = \"1.3\"\ntls-ciphers = \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"", "conf: tls-ciphers: TLS 1.3 suites are not configurable"},
		{"bad version", "[server]\n[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"ssl -h 127.0.0.1 -p 0\"\ntls-min-version = \"1.1\"", `conf: server.adapter[0].tls-min-version = "1.1": must be "1.2" or "1.3"`},
		{"verifyclient without ca", "[server]\nverifyclient = true", "conf: server.verifyclient = true needs server.ca"},
		{"threads", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1 -p 0\"\nthreads = -1", "conf: server.adapter[0].threads = -1: must be between 0 and 1024"},
		{"handshake-timeout", "[server]\nhandshake-timeout = 5", "conf: server.handshake-timeout: a duration is a string with a unit"},
		{"ssl without cert", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"ssl -h 127.0.0.1 -p 0\"", `serverconf: server.adapter[0].endpoint = "ssl -h 127.0.0.1 -p 0": an ssl endpoint needs cert and key`},
		{"TLS keys on tcp", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1 -p 0\"\n" + files, `its endpoint is tcp`},
		{"-e 1 without keys", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1 -p 0 -e 1\"", "-e 1 needs the adapter's accesskey and secretkey"},
		{"keys without -e 1", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1 -p 0\"\naccesskey = \"a\"\nsecretkey = \"b\"", "the endpoint has no -e 1"},
		{"bad endpoint", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1\"", `serverconf: server.adapter[0].endpoint = "tcp -h 127.0.0.1": `},
		{"udp with -e 1", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"udp -h 127.0.0.1 -p 0 -e 1\"\naccesskey = \"a\"\nsecretkey = \"b\"", "udp has no connections to authenticate"},
		{"TLS keys on udp", "[[server.adapter]]\nservant = \"A.B.C\"\nendpoint = \"udp -h 127.0.0.1 -p 0\"\n" + files, "its endpoint is udp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := conf.Parse([]byte(tc.toml))
			if err == nil {
				_, err = serverconf.New(cfg.Server)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// TestStartFailure: an adapter that cannot listen fails Start, naming it, and the adapters
// started before it are stopped (goleak in TestMain checks that nothing is left).
func TestStartFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg, err := conf.Parse(fmt.Appendf(nil, `
[[server.adapter]]
servant = "App.S.FirstObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
[[server.adapter]]
servant = "App.S.TakenObj"
endpoint = "tcp -h 127.0.0.1 -p %d"
`, port))
	if err != nil {
		t.Fatal(err)
	}
	srvs, err := serverconf.New(cfg.Server)
	if err != nil {
		t.Fatal(err)
	}
	err = within(t, "Start", srvs.Start)
	if err == nil || !strings.Contains(err.Error(), "adapter App.S.TakenObj") {
		t.Fatalf("Start: %v; want an error naming App.S.TakenObj", err)
	}
	first, _ := srvs.Endpoint("App.S.FirstObj")
	if c, err := net.DialTimeout("tcp", first.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("the first adapter still accepts on %s after Start failed", first.Addr())
	}
}

func newPool(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}
