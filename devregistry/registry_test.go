package devregistry_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/server"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// closeLimit bounds every Close and Stop (a liveness bound).
const closeLimit = 10 * time.Second

func within(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), closeLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(closeLimit + time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s did not return; goroutines:\n%s", what, buf[:runtime.Stack(buf, true)])
	}
}

// backend is a server of servant whose "who" function answers name.
func backend(t *testing.T, servant, name string) string {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1))
	if err := s.Handle(servant, "who", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		return append(rsp, name...), nil
	}); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { within(t, "server Stop", s.Stop) })
	return fmt.Sprintf("tcp -h 127.0.0.1 -p %d", addr.(*net.TCPAddr).Port)
}

func startRegistry(t *testing.T, opts devregistry.Options) *devregistry.Registry {
	t.Helper()
	r, err := devregistry.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { within(t, "registry Close", r.Close) })
	return r
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// client is a Communicator whose locator is r, refreshing every second, with extra TOML.
func client(t *testing.T, r *devregistry.Registry, extra string) *communicator.Communicator {
	t.Helper()
	cfg, err := conf.Parse(fmt.Appendf(nil, "log-level = \"error\"\nlocator = %q\nrefresh-endpoint-interval = \"1s\"\n%s", r.Locator(), extra))
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { within(t, "Communicator.Close", func(context.Context) error { return comm.Close() }) })
	return comm
}

// who calls obj.who through comm and returns the answer.
func who(t *testing.T, comm *communicator.Communicator, obj string) (string, error) {
	t.Helper()
	sp, err := comm.Proxy(obj)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := sp.InvokeRaw(ctx, "who", nil)
	return string(b), err
}

// eventually calls obj.who until the answers (of 8 calls in a row) are exactly want, within a
// liveness bound.
func eventually(t *testing.T, comm *communicator.Communicator, obj string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		got = got[:0]
		for range 8 {
			name, err := who(t, comm, obj)
			if err != nil {
				name = "error: " + err.Error()
			}
			got = append(got, name)
		}
		slices.Sort(got)
		if slices.Equal(slices.Compact(got), want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s answered by %q; want exactly %q", obj, got, want)
}

// TestResolveFromTOML: a Communicator whose locator is the registry calls a bare object name and
// reaches the endpoints the TOML file lists; a rewrite of the file is followed.
func TestResolveFromTOML(t *testing.T) {
	a := backend(t, "App.S.EchoObj", "a")
	b := backend(t, "App.S.EchoObj", "b")
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, fmt.Sprintf("[objects]\n\"App.S.EchoObj\" = [%q]\n", a))
	r := startRegistry(t, devregistry.Options{File: path, Reload: 100 * time.Millisecond})
	comm := client(t, r, "")
	eventually(t, comm, "App.S.EchoObj", "a")
	writeFile(t, path, fmt.Sprintf("[objects]\n\"App.S.EchoObj\" = [%q]\n", b))
	eventually(t, comm, "App.S.EchoObj", "b")
	// A content that does not parse keeps the last good one.
	writeFile(t, path, "[objects]\n\"App.S.EchoObj\" = [\"tcp -h\"]\n")
	time.Sleep(300 * time.Millisecond) // three reloads
	if l := r.Lookup("App.S.EchoObj"); len(l.Active) != 1 || l.Active[0].String() != b {
		t.Errorf("after a bad file: %v; want the last good list [%s]", l.Active, b)
	}
}

// TestSetRouting: clients with set routing reach only their set's endpoints, or the area's
// wildcard set when their own has none.
func TestSetRouting(t *testing.T) {
	sz1 := backend(t, "App.S.SetObj", "sz1")
	sh1 := backend(t, "App.S.SetObj", "sh1")
	szAny := backend(t, "App.S.SetObj", "sz*")
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, fmt.Sprintf("[objects]\n\"App.S.SetObj\" = [%q, %q, %q]\n",
		sz1+" -s app.sz.1", sh1+" -s app.sh.1", szAny+" -s app.sz.*"))
	r := startRegistry(t, devregistry.Options{File: path})
	for _, tc := range []struct {
		set  string
		want []string
	}{
		{"app.sz.1", []string{"sz1"}},
		{"app.sh.1", []string{"sh1"}},
		{"app.sz.2", []string{"sz*"}}, // no app.sz.2: the area's wildcard set
	} {
		t.Run(tc.set, func(t *testing.T) {
			comm := client(t, r, fmt.Sprintf("enableset = true\nsetdivision = %q\n", tc.set))
			eventually(t, comm, "App.S.SetObj", tc.want...)
		})
	}
	t.Run("no set", func(t *testing.T) {
		eventually(t, client(t, r, ""), "App.S.SetObj", "sh1", "sz*", "sz1")
	})
}

// TestRegistration: an endpoint registered over HTTP joins the lists a client follows, and
// leaves them when deregistered.
func TestRegistration(t *testing.T) {
	a := backend(t, "App.S.RegObj", "a")
	b := backend(t, "App.S.RegObj", "b")
	r := startRegistry(t, devregistry.Options{HTTPAddr: "127.0.0.1:0"})
	ctx := context.Background()
	if err := devregistry.Register(ctx, r.HTTPURL(), "App.S.RegObj", a, time.Minute); err != nil {
		t.Fatal(err)
	}
	comm := client(t, r, "")
	eventually(t, comm, "App.S.RegObj", "a")
	if err := devregistry.Register(ctx, r.HTTPURL(), "App.S.RegObj", b, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, comm, "App.S.RegObj", "a", "b")
	if err := devregistry.Deregister(ctx, r.HTTPURL(), "App.S.RegObj", a); err != nil {
		t.Fatal(err)
	}
	eventually(t, comm, "App.S.RegObj", "b")
	for _, tc := range []struct{ obj, ep, want string }{
		{"App.S.RegObj", "tcp -h 127.0.0.1", "400 Bad Request"},
		{"", a, "obj = \"\""},
	} {
		if err := devregistry.Register(ctx, r.HTTPURL(), tc.obj, tc.ep, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q, %q): %v; want an error containing %q", tc.obj, tc.ep, err, tc.want)
		}
	}
	if err := devregistry.Deregister(ctx, r.HTTPURL(), "App.S.RegObj", a); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Deregister of an endpoint not registered: %v; want 404", err)
	}
}

// TestQueryF asks every find function directly, through the generated QueryF proxy.
func TestQueryF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, `
[objects]
"App.S.Obj" = ["tcp -h 127.0.0.1 -p 9001", "tcp -h 10.2.0.1 -p 9002 -s app.sz.1", "tcp -h 10.3.0.1 -p 9003 -s app.sh.1"]
[inactive]
"App.S.Obj" = ["tcp -h 127.0.0.1 -p 9009"]
[groups]
local = ["127.0.0.0/8"]
far = ["10.2.0.0/16"]
`)
	r := startRegistry(t, devregistry.Options{File: path})
	comm := client(t, r, "")
	q := new(queryf.QueryFProxy)
	if err := comm.StringToProxy(r.Locator(), q); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ports := func(eps []endpointf.EndpointF) []int32 {
		var out []int32
		for _, e := range eps {
			out = append(out, e.Port)
		}
		return out
	}
	check := func(what string, ret int32, active, inactive []endpointf.EndpointF, err error, wantRet int32, wantActive, wantInactive []int32) {
		t.Helper()
		if err != nil || ret != wantRet || !slices.Equal(ports(active), wantActive) || !slices.Equal(ports(inactive), wantInactive) {
			t.Errorf("%s = %d, %v, %v, %v; want %d, %v, %v", what, ret, ports(active), ports(inactive), err, wantRet, wantActive, wantInactive)
		}
	}
	all := []int32{9001, 9002, 9003}
	eps, err := q.FindObjectById(ctx, "App.S.Obj")
	check("findObjectById", 0, eps, nil, err, 0, all, nil)
	ret, act, inact, err := q.FindObjectById4Any(ctx, "App.S.Obj")
	check("findObjectById4Any", ret, act, inact, err, 0, all, []int32{9009})
	ret, act, inact, err = q.FindObjectById4All(ctx, "App.S.Obj")
	check("findObjectById4All", ret, act, inact, err, 0, all, []int32{9009})
	ret, act, inact, err = q.FindObjectByIdInSameGroup(ctx, "App.S.Obj") // the caller is 127.0.0.1: group local
	check("findObjectByIdInSameGroup", ret, act, inact, err, 0, []int32{9001}, []int32{9009})
	ret, act, inact, err = q.FindObjectByIdInSameStation(ctx, "App.S.Obj", "far")
	check("findObjectByIdInSameStation far", ret, act, inact, err, 0, []int32{9002}, nil)
	ret, act, inact, err = q.FindObjectByIdInSameSet(ctx, "App.S.Obj", "app.sh.1")
	check("findObjectByIdInSameSet app.sh.1", ret, act, inact, err, 0, []int32{9003}, nil)
	ret, act, inact, err = q.FindObjectByIdInSameSet(ctx, "App.S.Obj", "app.sz.*")
	check("findObjectByIdInSameSet app.sz.*", ret, act, inact, err, 0, []int32{9002}, nil)
	ret, act, inact, err = q.FindObjectByIdInSameSet(ctx, "App.S.Obj", "app.sz")
	check("findObjectByIdInSameSet app.sz", ret, act, inact, err, -1, nil, nil)
	ret, act, inact, err = q.FindObjectById4All(ctx, "App.S.Unknown")
	check("findObjectById4All of an unknown object", ret, act, inact, err, 0, nil, nil)
}

// TestDirectory: a directory of naming files is served merged, and a new file is followed.
func TestDirectory(t *testing.T) {
	a := backend(t, "App.S.DirObj", "a")
	b := backend(t, "App.S.DirObj", "b")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "one"), "App.S.DirObj@"+a+"\n")
	r := startRegistry(t, devregistry.Options{File: dir, Reload: 100 * time.Millisecond})
	comm := client(t, r, "")
	eventually(t, comm, "App.S.DirObj", "a")
	writeFile(t, filepath.Join(dir, "two"), "App.S.DirObj@"+b+"\n")
	eventually(t, comm, "App.S.DirObj", "a", "b")
}

// TestStartErrors: a missing or bad file fails Start with an error naming it.
func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	writeFile(t, bad, "[objects]\n\"A.B.C\" = [\"tcp -h 127.0.0.1\"]\n[group]\n")
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.toml"), "no such file"},
		{filepath.Join(dir, "missing-dir"), "a .toml file or a directory"},
		{bad, "unknown key group"},
		{bad, `objects."A.B.C"[0]`},
	} {
		_, err := devregistry.Start(devregistry.Options{File: tc.file})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%s): %v; want an error containing %q", tc.file, err, tc.want)
		}
	}
	if _, err := devregistry.Start(devregistry.Options{QueryAddr: "127.0.0.1:0", HTTPAddr: "256.0.0.1:1"}); err == nil {
		t.Error("Start with a bad HTTP address succeeded")
	}
}
