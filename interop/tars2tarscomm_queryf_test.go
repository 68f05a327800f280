package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/future"
	"github.com/tarscomm/tarscomm/interop/internal/queryfixture"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// buildQueryF builds cmd/tarsgo-queryf into a temporary directory of t.
func buildQueryF(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tarsgo-queryf")
	// Without -race: TarsGo itself has data races, and they are not ours to report.
	if out, err := exec.Command(goTool(), "build", "-o", bin, "./cmd/tarsgo-queryf").CombinedOutput(); err != nil {
		t.Fatalf("build tarsgo-queryf: %v\n%s", err, out)
	}
	return bin
}

func conv(eps []queryfixture.Endpoint) []endpointf.EndpointF {
	out := make([]endpointf.EndpointF, len(eps))
	for i, e := range eps {
		out[i] = endpointf.EndpointF{Host: e.Host, Port: e.Port, Timeout: e.Timeout, Istcp: e.Istcp, Grid: e.Grid,
			Groupworkid: e.Groupworkid, Grouprealid: e.Grouprealid, SetId: e.SetId, Qos: e.Qos, BakFlag: e.BakFlag,
			Weight: e.Weight, WeightType: e.WeightType, AuthType: e.AuthType}
	}
	return out
}

// sameEndpoints compares endpoint lists, nil and empty alike.
func sameEndpoints(got, want []endpointf.EndpointF) bool {
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	return reflect.DeepEqual(got, want)
}

const queryConfig = `<tars>
  <application>
    <server>
      app=Interop
      server=TarsGoQuery
      logLevel=ERROR
      <Interop.TarsGoQuery.QueryObjAdapter>
        endpoint=tcp -h 127.0.0.1 -p %d -t 60000
        servant=Interop.TarsGoQuery.QueryObj
      </Interop.TarsGoQuery.QueryObjAdapter>
    </server>
  </application>
</tars>
`

// startTarsGoQueryF runs TarsGo's QueryF server (TarsGo's generated queryf package) and returns
// its proxy string; t.Cleanup stops it.
func startTarsGoQueryF(t *testing.T, bin string) string {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "server.conf")
		if err := os.WriteFile(path, fmt.Appendf(nil, queryConfig, port), 0o644); err != nil {
			t.Fatal(err)
		}
		out := new(lockedBuffer)
		cmd := exec.Command(bin, "serve", "-config", path)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() { _ = cmd.Process.Kill(); <-exited }
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
			if err == nil {
				_ = c.Close()
				t.Cleanup(func() {
					stop()
					if t.Failed() {
						t.Logf("TarsGo QueryF server output:\n%s", out.String())
					}
				})
				return "Interop.TarsGoQuery.QueryObj@" + endpointString(port)
			}
			select {
			case <-exited:
			case <-time.After(20 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				stop()
			}
			if attempt == 2 {
				t.Fatalf("TarsGo QueryF server does not listen: %s", out.String())
			}
			break
		}
	}
}

// TestQueryFProxyToTarsGoServer calls TarsGo's QueryF server with the proxy tars2tarscomm
// generates from protocol/tars/QueryF.tars, in every call style.
func TestQueryFProxyToTarsGoServer(t *testing.T) {
	bin := buildQueryF(t)
	target := startTarsGoQueryF(t, bin)
	comm := newComm(t)
	q := new(queryf.QueryFProxy)
	if err := comm.StringToProxy(target, q); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	for _, id := range []string{"a", "Hello.World.Obj", "empty"} {
		eps, err := q.FindObjectById(ctx, id)
		if err != nil || !sameEndpoints(eps, conv(queryfixture.Active(id))) {
			t.Fatalf("FindObjectById(%q) = %+v, %v; want %+v", id, eps, err, conv(queryfixture.Active(id)))
		}
		for _, f := range []struct {
			name string
			call func(context.Context, string, ...servantproxy.CallOption) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error)
		}{
			{"findObjectById4Any", q.FindObjectById4Any},
			{"findObjectById4All", q.FindObjectById4All},
			{"findObjectByIdInSameGroup", q.FindObjectByIdInSameGroup},
		} {
			ret, a, in, err := f.call(ctx, id)
			checkBoth(t, f.name, id, ret, a, in, err)
		}
		ret, a, in, err := q.FindObjectByIdInSameStation(ctx, id, "sz")
		checkBoth(t, "findObjectByIdInSameStation", queryfixture.StationKey(id, "sz"), ret, a, in, err)
		ret, a, in, err = q.FindObjectByIdInSameSet(ctx, id, "app.sz.1")
		checkBoth(t, "findObjectByIdInSameSet", queryfixture.SetKey(id, "app.sz.1"), ret, a, in, err)

		// Async: the typed callback runs once on an async worker.
		done := make(chan error, 1)
		err = q.AsyncFindObjectById4All(ctx, id, func(ret int32, a, in []endpointf.EndpointF, err error) {
			if err == nil && (ret != queryfixture.Ret("findObjectById4All", id) ||
				!sameEndpoints(a, conv(queryfixture.Active(id))) || !sameEndpoints(in, conv(queryfixture.Inactive(id)))) {
				err = fmt.Errorf("async reply %d %+v %+v", ret, a, in)
			}
			done <- err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}

		// Futures, joined.
		f1 := q.FutureFindObjectById(ctx, id)
		f2 := q.FutureFindObjectByIdInSameSet(ctx, id, "x.y.z")
		if err := future.Join(ctx, f1, f2); err != nil {
			t.Fatal(err)
		}
		eps, err = f1.Get(ctx)
		if err != nil || !sameEndpoints(eps, conv(queryfixture.Active(id))) {
			t.Fatalf("FutureFindObjectById(%q) = %+v, %v", id, eps, err)
		}
		r, err := f2.Get(ctx)
		checkBoth(t, "findObjectByIdInSameSet", queryfixture.SetKey(id, "x.y.z"), r.Ret, r.ActiveEp, r.InactiveEp, err)

		// One-way: written, no reply expected.
		if err := q.OnewayFindObjectById(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}

func checkBoth(t *testing.T, fn, key string, ret int32, a, in []endpointf.EndpointF, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s(%q): %v", fn, key, err)
	}
	if want := queryfixture.Ret(fn, key); ret != want {
		t.Errorf("%s(%q) returned %d, want %d", fn, key, ret, want)
	}
	if want := conv(queryfixture.Active(key)); !sameEndpoints(a, want) {
		t.Errorf("%s(%q) activeEp = %+v, want %+v", fn, key, a, want)
	}
	if want := conv(queryfixture.Inactive(key)); !sameEndpoints(in, want) {
		t.Errorf("%s(%q) inactiveEp = %+v, want %+v", fn, key, in, want)
	}
}

// queryImpl serves QueryF on tarscomm's server as package queryfixture says.
type queryImpl struct {
	queryf.UnimplementedQueryFServer
}

func (queryImpl) FindObjectById(_ context.Context, _ *server.Current, id string) ([]endpointf.EndpointF, error) {
	return conv(queryfixture.Active(id)), nil
}

func both(fn, key string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return queryfixture.Ret(fn, key), conv(queryfixture.Active(key)), conv(queryfixture.Inactive(key)), nil
}

func (queryImpl) FindObjectById4Any(_ context.Context, _ *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return both("findObjectById4Any", id)
}

func (queryImpl) FindObjectById4All(_ context.Context, _ *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return both("findObjectById4All", id)
}

func (queryImpl) FindObjectByIdInSameGroup(_ context.Context, _ *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return both("findObjectByIdInSameGroup", id)
}

func (queryImpl) FindObjectByIdInSameStation(_ context.Context, _ *server.Current, id, station string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return both("findObjectByIdInSameStation", queryfixture.StationKey(id, station))
}

// FindObjectByIdInSameSet is left to UnimplementedQueryFServer: it answers RetNoFunc.

// startQueryFServer serves queryImpl with RegisterQueryF on tarscomm's server.
func startQueryFServer(t *testing.T) (string, int) {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1), server.WithLogger(zaptest.NewLogger(t).Named("queryf")))
	const obj = "Interop.TarscommQuery.QueryObj"
	if err := queryf.RegisterQueryF(s, obj, queryImpl{}); err != nil {
		t.Fatal(err)
	}
	port := serve(t, s, "127.0.0.1:0", "the QueryF server")
	return obj + "@" + endpointString(port), port
}

// answer is cmd/tarsgo-queryf's Answer, decoded into tarscomm's EndpointF (TarsGo's JSON field
// names are the IDL's, which encoding/json matches case-insensitively).
type answer struct {
	Func     string                `json:"func"`
	ID       string                `json:"id"`
	Arg      string                `json:"arg"`
	Ret      int32                 `json:"ret"`
	Active   []endpointf.EndpointF `json:"active"`
	Inactive []endpointf.EndpointF `json:"inactive"`
	Err      string                `json:"err"`
	ErrCode  int32                 `json:"err_code"`
}

// TestTarsGoClientToQueryFServer: TarsGo's generated QueryF proxy calls the QueryF server
// tars2tarscomm generates (RegisterQueryF on tarscomm's server).
func TestTarsGoClientToQueryFServer(t *testing.T) {
	bin := buildQueryF(t)
	target, _ := startQueryFServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "call", "-proxy", target, "-ids", "a,Hello.World.Obj,empty")
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tarsgo-queryf call: %v\n%s", err, stderr.String())
	}
	n := 0
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("bad answer %q: %v", sc.Text(), err)
		}
		n++
		switch a.Func {
		case "findObjectById":
			if a.Err != "" || !sameEndpoints(a.Active, conv(queryfixture.Active(a.ID))) {
				t.Errorf("TarsGo client: findObjectById(%q) = %+v, %q", a.ID, a.Active, a.Err)
			}
		case "findObjectByIdInSameSet":
			// Unimplemented: the server answers RetNoFunc (-3), which TarsGo reports as an error.
			if a.Err == "" || a.ErrCode != codec.RetNoFunc {
				t.Errorf("TarsGo client: unimplemented findObjectByIdInSameSet answered %q (code %d), want code -3", a.Err, a.ErrCode)
			}
		default:
			key := a.ID
			if a.Func == "findObjectByIdInSameStation" {
				key = queryfixture.StationKey(a.ID, a.Arg)
			}
			var err error
			if a.Err != "" {
				err = errors.New(a.Err)
			}
			checkBoth(t, a.Func, key, a.Ret, a.Active, a.Inactive, err)
		}
	}
	if n != 3*6 {
		t.Fatalf("got %d answers, want 18:\n%s\n%s", n, stdout.String(), stderr.String())
	}
}
