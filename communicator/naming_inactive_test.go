package communicator_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming/registry"
)

// TestRegistryInactiveOnlyFailsNoEndpoint: the registry answers an object with no active
// endpoint and one registered-but-inactive endpoint: its calls fail with ErrNoEndpoint
// (naming.Source: "An empty Active list means the object has no endpoint now"), as in TarsCpp,
// whose EndpointManager never selects an inactive endpoint. They used to go to the inactive one.
func TestRegistryInactiveOnlyFailsNoEndpoint(t *testing.T) {
	g := startGreeter(t, "inactive", serverOpt{})
	reg := startRegistry(t, "")
	reg.set(nil, g) // active: none; inactive: g
	comm := newComm(t, registryConf(reg, livenessTimeouts))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	for i := range 5 {
		from, err := sayHello(ctx, sp, "x", uint64(i))
		if err == nil {
			t.Fatalf("call %d was answered by %q, an endpoint the registry lists only as inactive; want ErrNoEndpoint", i, from)
		}
		if !errors.Is(err, communicator.ErrNoEndpoint) {
			t.Fatalf("call %d: err = %v, want ErrNoEndpoint", i, err)
		}
	}
}

// TestRetryNeverGoesToInactiveEndpoint: the registry lists one active endpoint (whose port
// refuses) and one inactive endpoint. With retries = 1 the call refused by the active endpoint
// fails with ErrConnection: it is not retried on the inactive one (it was: a retry took any
// endpoint not tried yet).
func TestRetryNeverGoesToInactiveEndpoint(t *testing.T) {
	g := startGreeter(t, "inactive", serverOpt{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().(*net.TCPAddr)
	l.Close()
	reg := startRegistry(t, "")
	reg.set(nil, g)
	bad, _ := endpoint.ParseEndpoint("tcp -h 127.0.0.1 -p " + strconv.Itoa(refused.Port))
	reg.mu.Lock()
	reg.active = append(reg.active, registry.ToEndpointF(bad))
	reg.mu.Unlock()
	comm := newComm(t, registryConf(reg, func(c *conf.Config) {
		livenessTimeouts(c)
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{servant: {Retries: 1}}
	}))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	from, err := sayHello(ctx, sp, "x", 1)
	if err == nil {
		t.Fatalf("the call was answered by %q, the endpoint the registry lists as inactive (retried there after the active one refused)", from)
	}
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection (the active endpoint refused)", err)
	}
}

// TestFileSetWildcardGroup: with set routing on (app.sz.1), an object whose only endpoint is in
// the area's wildcard set app.sz.* is served through the registry (findObjectByIdInSameSet: the
// set, else the area's wildcard set; devregistry does so) and through a naming file alike
// (naming.SelectSet), which used to give no endpoint at all.
func TestFileSetWildcardGroup(t *testing.T) {
	g := startGreeter(t, "wild", serverOpt{})
	line := servant + "@" + g.endpoint() + " -s app.sz.*\n"
	setOn := func(c *conf.Config) {
		livenessTimeouts(c)
		c.EnableSet, c.SetDivision = true, "app.sz.1"
	}

	// The registry (devregistry, its directory of naming files) answers with the wildcard set.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "objs.txt"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := devregistry.Start(devregistry.Options{File: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeWithin(t, "devregistry", func() error { return reg.Close(context.Background()) }) })
	viaReg := newComm(t, func(c *conf.Config) { setOn(c); c.Locator = reg.Locator() })
	sp, err := viaReg.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if from, err := sayHello(ctx, sp, "r", 1); err != nil || from != "wild" {
		t.Fatalf("through the registry: from %q, err %v; want an answer from the wildcard set", from, err)
	}

	// The same line in a naming file.
	path := filepath.Join(t.TempDir(), "naming.txt")
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	viaFile := newComm(t, func(c *conf.Config) { setOn(c); c.NamingFile = path })
	sp2, err := viaFile.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if from, err := sayHello(cctx, sp2, "f", 2); err != nil || from != "wild" {
		t.Fatalf("through the naming file: from %q, err %v; the registry's rules give the wildcard set app.sz.*", from, err)
	}
}
