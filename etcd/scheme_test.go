package etcd_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/naming"
)

// TestSchemeFromTOML: importing this module registers the etcd scheme; a TOML naming key
// selects it, the Communicator builds the client and the source, calls to a bare object reach
// the endpoint registered in etcd, and Close closes the client (goleak checks it is gone).
func TestSchemeFromTOML(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	a := startGreeter(t, "a")
	register(t, cli, a, 5*time.Second)

	cfg, err := conf.Parse(fmt.Appendf(nil, "naming = \"etcd://%s%s?debounce=10ms\"\n", es.endpoint(), prefix))
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := sayHello(context.Background(), sp, "toml", 1); err != nil || from != "a" {
		t.Fatalf("call through etcd:// from TOML: from %q, %v; want a", from, err)
	}
	if err := comm.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSchemeErrors: a naming address the etcd scheme cannot read is an error at Build.
func TestSchemeErrors(t *testing.T) {
	for target, want := range map[string]string{
		"etcd://":                            "want",
		"etcd://,127.0.0.1:2379/tars":        "want",
		"etcd://127.0.0.1:2379/tars?ttl=1":   "unknown option ttl",
		"etcd://127.0.0.1:2379?debounce=bad": "debounce",
	} {
		src, err := naming.Build(target, naming.Env{})
		if err == nil {
			_ = naming.Close(src)
			t.Errorf("%s: built, want an error saying %q", target, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", target, err, want)
		}
	}
	if !slices.Contains(naming.Schemes(), "etcd") {
		t.Fatalf("schemes %v: etcd not registered", naming.Schemes())
	}
}
