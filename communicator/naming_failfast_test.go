package communicator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// Issue 16 item 9 (fail fast, and say why) and item 8 (ssl endpoints from the registry), end to
// end: real servers on loopback, the registry fixture of naming_registry_test.go.

// ffComm starts a Communicator on cfg changed by edit; t.Cleanup closes it within ffCloseBound,
// failing with every goroutine's stack if Close hangs.
func ffComm(t *testing.T, edit func(*conf.Config)) *communicator.Communicator {
	t.Helper()
	cfg := conf.Default()
	if edit != nil {
		edit(&cfg)
	}
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffClose(t, c) })
	return c
}

const ffCloseBound = 10 * time.Second

// ffClose closes c, failing the test with all goroutine stacks if that takes ffCloseBound.
func ffClose(t *testing.T, c *communicator.Communicator) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(ffCloseBound):
		buf := make([]byte, 1<<20)
		t.Fatalf("Communicator.Close did not return within %v; goroutines:\n%s", ffCloseBound, buf[:runtime.Stack(buf, true)])
	}
}

// TestStringToProxyBareObjectWithoutNaming: a bare object with no locator and no naming source
// is refused by StringToProxy and by Proxy with an error naming the locator key (and matching
// ErrNoEndpoint), and nothing is bound. Before the fix StringToProxy returned nil and every
// call failed with a bare "no endpoint for servant"; Proxy returned a proxy whose calls failed.
func TestStringToProxyBareObjectWithoutNaming(t *testing.T) {
	comm := ffComm(t, nil)
	var gp hellopb.GreeterProxy
	err := comm.StringToProxy(servant, &gp)
	if err == nil {
		t.Fatal("StringToProxy of a bare object without naming returned nil")
	}
	if !strings.Contains(err.Error(), `"locator"`) || !strings.Contains(err.Error(), servant) {
		t.Errorf("error %q does not name the locator key and the object", err)
	}
	if !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Errorf("error %v does not match ErrNoEndpoint", err)
	}
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant, &sp); err == nil {
		t.Fatal("StringToProxy into a *ServantProxy: nil error")
	}
	if sp.Target().Object != "" {
		t.Errorf("a refused StringToProxy bound the proxy to %q", sp.Target().Object)
	}

	// Proxy refuses it the same way.
	bare, err := comm.Proxy(servant)
	if bare != nil || !errors.Is(err, communicator.ErrNoEndpoint) || !strings.Contains(err.Error(), `"locator"`) {
		t.Fatalf("Proxy of a bare object without naming: %v, %v; want ErrNoEndpoint naming the locator key", bare, err)
	}
	// With a naming source that has nothing for it, the bare proxy is made and its calls say so.
	named, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)), communicator.WithNaming(naming.Static{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffClose(t, named) })
	bare, err = named.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), bare, "x", 1); !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Fatalf("call through a bare Proxy whose naming has no endpoint: %v; want ErrNoEndpoint", err)
	}
}

// TestStringToProxyNilTarget: a typed nil proxy (and a nil interface) is an error, not a panic.
// Before the fix a nil *hellopb.GreeterProxy panicked in SetServantProxy.
func TestStringToProxyNilTarget(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := ffComm(t, nil)
	proxy := servant + "@" + g.endpoint()
	var typed *hellopb.GreeterProxy
	var sp *servantproxy.ServantProxy
	for _, tc := range []struct {
		name string
		prx  any
		want string
	}{
		{"nil *GreeterProxy", typed, "nil *hellopb.GreeterProxy"},
		{"nil *ServantProxy", sp, "nil *servantproxy.ServantProxy"},
		{"nil interface", nil, "StringToProxy into nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("StringToProxy panicked: %v", r)
					}
				}()
				err = comm.StringToProxy(proxy, tc.prx)
			}()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	// The same proxy string into a real proxy works.
	gp := new(hellopb.GreeterProxy)
	if err := comm.StringToProxy(proxy, gp); err != nil {
		t.Fatal(err)
	}
	rsp, err := gp.SayHello(testCtx(t), &hellopb.HelloRequest{Name: "n", Seq: 1})
	if err != nil || rsp.GetMessage() != "n@a" {
		t.Fatalf("call through the bound proxy: %v, %v", rsp, err)
	}
}

// TestNamingFileUnusable: a naming-file that does not exist, is cut in the middle of a line, or
// does not parse makes New fail with an error naming the file. Before the fix New succeeded
// (nothing logged) and every call timed out after its 3 s.
func TestNamingFileUnusable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		path string
		want string
	}{
		{"missing", filepath.Join(dir, "no-such-naming.txt"), "no such file"},
		{"cut", write("cut.txt", servant+"@tcp -h 127.0.0.1 -p 40"), "newline"},
		{"bad endpoint", write("bad.txt", servant+"@tcp -h 127.0.0.1 -p x\n"), `line 1: endpoint: bad port "x"`},
		{"no port", write("noport.txt", "# c\n"+servant+"@tcp -h 127.0.0.1\n"), `line 2: endpoint: missing port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := conf.Default()
			cfg.NamingFile = tc.path
			c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
			if err == nil {
				ffClose(t, c)
				t.Fatalf("New with naming-file %s succeeded", tc.path)
			}
			if !strings.Contains(err.Error(), "naming-file") || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v; want an error naming naming-file, %s and %q", err, tc.path, tc.want)
			}
		})
	}
}

// TestDeadLocatorSaysNaming: with a locator nobody answers on (a port this test opened and
// closed), a call fails at its deadline with an error matching ErrNaming (a *naming.Error), the
// registry's failure (ErrConnection, the QueryF call's) and ErrTimeout, for sync and async calls.
// Before the fix it was a plain "call timed out".
func TestDeadLocatorSaysNaming(t *testing.T) {
	reg := startRegistry(t, "")
	reg.stop(t)
	comm := ffComm(t, registryConf(reg, nil))
	var gp hellopb.GreeterProxy
	if err := comm.StringToProxy(servant, &gp); err != nil {
		t.Fatal(err)
	}
	check := func(kind string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s call with a dead locator succeeded", kind)
		}
		var ne *naming.Error
		if !errors.Is(err, communicator.ErrNaming) || !errors.As(err, &ne) || ne.Query.Object != servant {
			t.Errorf("%s: %v; want ErrNaming for %s", kind, err, servant)
		}
		if !errors.Is(err, communicator.ErrConnection) {
			t.Errorf("%s: %v; want the registry's connection failure wrapped", kind, err)
		}
		if !errors.Is(err, communicator.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v; want it to match ErrTimeout too", kind, err)
		}
		for _, s := range []string{"naming", "registry query failed", "QueryObj"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", kind, err, s)
			}
		}
	}
	// 2s: a liveness margin for the refused query to be reported first on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := gp.SayHello(ctx, &hellopb.HelloRequest{Name: "n", Seq: 1})
	check("sync", err)

	done := make(chan error, 1)
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.AsyncInvoke(context.Background(), "SayHello", &hellopb.HelloRequest{Name: "n", Seq: 2}, new(hellopb.HelloReply),
		func(err error) { done <- err }, servantproxy.WithTimeout(time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		check("async", err)
	case <-time.After(10 * time.Second):
		t.Fatal("async call with a dead locator: no callback within 10s")
	}
}

// TestRegistrySlowAnswerSaysNaming: a call whose deadline passes while the registry has not
// answered yet fails with ErrNaming (no cause yet) and ErrTimeout, not a bare timeout.
func TestRegistrySlowAnswerSaysNaming(t *testing.T) {
	reg := startRegistry(t, "")
	hold := make(chan struct{})
	reg.mu.Lock()
	reg.hold = hold
	reg.mu.Unlock()
	defer close(hold)
	comm := ffComm(t, registryConf(reg, nil))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sayHello(context.Background(), sp, "n", 1, servantproxy.WithTimeout(200*time.Millisecond))
	var ne *naming.Error
	if !errors.Is(err, communicator.ErrNaming) || !errors.Is(err, communicator.ErrTimeout) || !errors.As(err, &ne) || ne.Cause != nil {
		t.Fatalf("call while the registry holds its answer: %v; want ErrNaming (no cause) and ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "no answer") {
		t.Errorf("%q does not say the source has not answered", err)
	}
}

// TestRegistrySSLEndpoints: the registry lists a TLS server as ssl (istcp 2) beside an endpoint
// of an unknown transport (istcp 3): calls go over TLS to the ssl one, none to the other. Before
// the fix the registry source kept only istcp 1 and the call timed out waiting for an endpoint.
func TestRegistrySSLEndpoints(t *testing.T) {
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "tls", tlsServerOpt{pair: p.server})
	reg := startRegistry(t, "")
	ssl, err := endpoint.ParseEndpoint(sslEndpoint(g.addr))
	if err != nil {
		t.Fatal(err)
	}
	unknown := registry.ToEndpointF(ssl)
	unknown.Istcp = 3
	reg.mu.Lock()
	reg.active = []endpointf.EndpointF{unknown, registry.ToEndpointF(ssl)}
	reg.mu.Unlock()
	comm := ffComm(t, registryConf(reg, func(c *conf.Config) { c.TLS.CA = p.ca.File }))
	var gp hellopb.GreeterProxy
	if err := comm.StringToProxy(servant, &gp); err != nil {
		t.Fatal(err)
	}
	for i := range uint64(10) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rsp, err := gp.SayHello(ctx, &hellopb.HelloRequest{Name: "n", Seq: i})
		cancel()
		if err != nil {
			t.Fatalf("call %d to the registry's ssl endpoint: %v", i, err)
		}
		if from, err := checkReply(rsp, "n", i); err != nil || from != "tls" {
			t.Fatalf("call %d: from %q, %v; want the TLS greeter", i, from, err)
		}
	}
}

// TestBadLocatorFailsNew: a locator whose endpoint does not parse (here without -p) makes New
// fail, naming the locator.
func TestBadLocatorFailsNew(t *testing.T) {
	for _, loc := range []string{
		"tars.tarsregistry.QueryObj@tcp -h 127.0.0.1",
		"tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p -1",
	} {
		cfg := conf.Default()
		cfg.Locator = loc
		c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
		if err == nil {
			ffClose(t, c)
			t.Fatalf("New with locator %q succeeded", loc)
		}
		if !strings.Contains(err.Error(), "locator") || !strings.Contains(err.Error(), "port") {
			t.Errorf("locator %q: %v; want an error naming the locator and its port", loc, err)
		}
	}
}
