package communicator_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// closeCounter is a Static source that counts its Close.
type closeCounter struct {
	naming.Static
	closed *atomic.Int32
}

func (s closeCounter) Close() error { s.closed.Add(1); return nil }

// TestNamingKeySelectsScheme: the naming key of a TOML file picks the source of its scheme (here
// one registered by the test), the Communicator owns it (closes it at Close), and calls to a
// bare object reach the endpoints it gives.
func TestNamingKeySelectsScheme(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	var closed atomic.Int32
	var rest atomic.Value
	naming.Register("commtest", func(tg naming.Target, env naming.Env) (naming.Source, error) {
		rest.Store(tg.Rest)
		ep, err := endpoint.ParseEndpoint(a.endpoint())
		if err != nil {
			return nil, err
		}
		return closeCounter{naming.Static{Active: []endpoint.Endpoint{ep}}, &closed}, nil
	})
	cfg, err := conf.Parse([]byte(`naming = "commtest://anything/at?all=1"`))
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if got := rest.Load(); got != "anything/at?all=1" {
		t.Errorf("the builder got %q", got)
	}
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(testCtx(t), sp, "s", 1); err != nil || from != "a" {
		t.Fatalf("call through the commtest scheme: from %q, %v", from, err)
	}
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
	if n := closed.Load(); n != 1 {
		t.Fatalf("the source was closed %d times, want once", n)
	}
}

// TestNamingKeyFile: naming = "file://<path>" is the naming-file key.
func TestNamingKeyFile(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	path := filepath.Join(t.TempDir(), "naming.txt")
	writeNaming(t, path, a)
	comm := newComm(t, func(c *conf.Config) { c.Naming.Source = "file://" + path })
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(testCtx(t), sp, "f", 1); err != nil || from != "a" {
		t.Fatalf("call through file://: from %q, %v", from, err)
	}
}

// TestNamingKeyUnknownScheme: an unknown scheme fails New, naming the key, the registered
// schemes, and for etcd the module to import.
func TestNamingKeyUnknownScheme(t *testing.T) {
	for target, wants := range map[string][]string{
		"consul://127.0.0.1:8500":    {`communicator: naming = "consul://127.0.0.1:8500": naming: unknown scheme "consul"`, "dns, dns+srv, file", "tars"},
		"etcd://127.0.0.1:2379/tars": {`unknown scheme "etcd"`, `import _ "github.com/tarscomm/tarscomm/etcd"`},
	} {
		cfg := conf.Default()
		cfg.Naming.Source = target
		c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
		if err == nil {
			_ = closeComm(t, c)
			t.Fatalf("New with naming = %q succeeded", target)
		}
		if !errors.Is(err, naming.ErrUnknownScheme) {
			t.Errorf("%s: %v does not match naming.ErrUnknownScheme", target, err)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", target, err, w)
			}
		}
	}
}

// TestNamingFileSets: endpoints of a naming file carry their sets; with set routing on, a bare
// object gets the endpoints of the client's set, and ProxyWithSet those of the set it names.
func TestNamingFileSets(t *testing.T) {
	a, b := startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{})
	path := filepath.Join(t.TempDir(), "naming.txt")
	data := servant + "@" + a.endpoint() + " -s app.sz.1:" + b.endpoint() + " -s app.sz.2\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	comm := newComm(t, func(c *conf.Config) {
		c.Naming.Source = "file://" + path
		c.EnableSet, c.SetDivision = true, "app.sz.1"
	})
	ctx := testCtx(t)
	own, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	other, err := comm.ProxyWithSet(servant, "app.sz.2")
	if err != nil {
		t.Fatal(err)
	}
	for seq := range uint64(10) {
		if from, err := sayHello(ctx, own, "s", seq); err != nil || from != "a" {
			t.Fatalf("call in set app.sz.1: from %q, %v; want a", from, err)
		}
		if from, err := sayHello(ctx, other, "s", seq); err != nil || from != "b" {
			t.Fatalf("call in set app.sz.2: from %q, %v; want b", from, err)
		}
	}
}
