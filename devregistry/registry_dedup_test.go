package devregistry_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/protocol/queryf"
)

// TestFileAndRegisteredSameEndpoint follows the README's "A registry to develop against":
// registry.toml lists App.Server.EchoObj on 9000 and 9001 (and 9002 as inactive), and the servers
// on 9000 and 9002 register themselves as the README's curl line does. QueryF answers each
// address once, 9002 active. Before, it answered 9000 twice (and /objects listed it twice), and
// 9002 both active and inactive: TARS's registry keys an adapter by its address, and a client
// that does not deduplicate (tarscomm's does) weighed 9000 double (found by a review).
func TestFileAndRegisteredSameEndpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, `
[objects]
"App.Server.EchoObj" = ["tcp -h 127.0.0.1 -p 9000 -s app.sz.1", "tcp -h 127.0.0.1 -p 9001 -s app.sh.1"]
[inactive]
"App.Server.EchoObj" = ["tcp -h 127.0.0.1 -p 9002"]
`)
	r := startRegistry(t, devregistry.Options{File: path})
	ep, err := endpoint.ParseEndpoint("tcp -h 127.0.0.1 -p 9000 -s app.sz.1")
	if err != nil {
		t.Fatal(err)
	}
	r.Register("App.Server.EchoObj", ep, 10*time.Second) // the README's curl, without HTTP
	ep2, err := endpoint.ParseEndpoint("tcp -h 127.0.0.1 -p 9002")
	if err != nil {
		t.Fatal(err)
	}
	r.Register("App.Server.EchoObj", ep2, 10*time.Second)
	if l := r.Lookup("App.Server.EchoObj"); len(l.Inactive) != 0 {
		t.Errorf("inactive after its server registered: %v, want none", l.Inactive)
	}

	comm := client(t, r, "")
	q := new(queryf.QueryFProxy)
	if err := comm.StringToProxy(r.Locator(), q); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	eps, err := q.FindObjectById(ctx, "App.Server.EchoObj")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range eps {
		got = append(got, net.JoinHostPort(e.Host, fmt.Sprint(e.Port)))
	}
	want := []string{"127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"}
	if !slices.Equal(got, want) {
		t.Errorf("findObjectById after registering an endpoint the file lists = %v; want %v (each endpoint once)", got, want)
	}
}
