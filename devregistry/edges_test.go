package devregistry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/protocol/queryf"
)

// sendForm posts form values to the registry's HTTP interface and returns the status code and
// body (a connection per request, so that no idle connection outlives the test).
func sendForm(t *testing.T, method, u string, v url.Values) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	var body io.Reader
	if v != nil {
		body = strings.NewReader(v.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rsp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	b, _ := io.ReadAll(rsp.Body)
	return rsp.StatusCode, string(b)
}

// TestRegisterRejectsMalformedSet: an endpoint registered with a set division that is not
// "name.area.group" ("-s app.sz", a typo of app.sz.1) can never be selected by set routing the
// way its server meant: naming.SelectSet treats it as in no set. The registry refuses malformed
// set ids in queries (-1), and the client refuses them in setdivision (conf.SetDivisionProblem);
// a registration carrying one is refused with 400 too (before, it was served and routed as
// set-less in silence).
func TestRegisterRejectsMalformedSet(t *testing.T) {
	r := startRegistry(t, devregistry.Options{HTTPAddr: "127.0.0.1:0"})
	for _, set := range []string{"app.sz", "app.sz.1.x", "app..1", "*.sz.1"} {
		ep := "tcp -h 127.0.0.1 -p 9000 -s " + set
		code, body := sendForm(t, http.MethodPost, r.HTTPURL()+"/register",
			url.Values{"obj": {"App.S.SetTypoObj"}, "endpoint": {ep}})
		if code != http.StatusBadRequest {
			t.Errorf("register %q: %d %q (served: %v); want 400: a set must be \"name.area.group\"",
				ep, code, strings.TrimSpace(body), r.Lookup("App.S.SetTypoObj").Active)
		}
		for _, e := range r.Lookup("App.S.SetTypoObj").Active {
			r.Deregister("App.S.SetTypoObj", e)
		}
	}
}

// TestTOMLRejectsMalformedSet: the same in the registry's file: an endpoint whose -s is
// not "name.area.group" fails Start naming it, as an endpoint that does not parse does (before,
// it was served).
func TestTOMLRejectsMalformedSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, "[objects]\n\"App.S.Obj\" = [\"tcp -h 127.0.0.1 -p 9000 -s app.sz\"]\n")
	r, err := devregistry.Start(devregistry.Options{File: path})
	if err == nil {
		l := r.Lookup("App.S.Obj")
		within(t, "registry Close", r.Close)
		t.Fatalf("Start with an endpoint of set \"app.sz\" succeeded and serves %v; want an error naming objects.\"App.S.Obj\"[0]: a set must be \"name.area.group\"", l.Active)
	}
}

// TestObjectsOmitsExpired: once a registration's ttl has passed, GET /objects must not
// list its object (it serves nothing). Before, the first GET after the expiry listed it with
// empty lists.
func TestObjectsOmitsExpired(t *testing.T) {
	r := startRegistry(t, devregistry.Options{HTTPAddr: "127.0.0.1:0"})
	code, body := sendForm(t, http.MethodPost, r.HTTPURL()+"/register?ttl=100ms",
		url.Values{"obj": {"App.S.ShortObj"}, "endpoint": {"tcp -h 127.0.0.1 -p 9000"}})
	if code != http.StatusOK {
		t.Fatalf("register: %d %s", code, body)
	}
	time.Sleep(300 * time.Millisecond) // past the ttl
	code, body = sendForm(t, http.MethodGet, r.HTTPURL()+"/objects", nil)
	if code != http.StatusOK {
		t.Fatalf("objects: %d %s", code, body)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("objects: %v in %q", err, body)
	}
	if _, ok := got["App.S.ShortObj"]; ok {
		t.Errorf("GET /objects after the registration expired: %s; want App.S.ShortObj absent (it has no endpoint)", strings.TrimSpace(body))
	}
}

// TestDeregisterExpired: deregistering a registration whose ttl has passed answers 404
// (it is not registered any more), whether or not a query happened to purge it first (before, 200
// unless a query had).
func TestDeregisterExpired(t *testing.T) {
	r := startRegistry(t, devregistry.Options{HTTPAddr: "127.0.0.1:0"})
	ep := "tcp -h 127.0.0.1 -p 9000"
	if err := devregistry.Register(context.Background(), r.HTTPURL(), "App.S.GoneObj", ep, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // past the ttl, no query in between
	err := devregistry.Deregister(context.Background(), r.HTTPURL(), "App.S.GoneObj", ep)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Deregister of a registration expired 200ms ago: %v; want 404 (not registered), as after a query", err)
	}
}

// TestMalformedQueryF (a guard: no test sends devregistry bad requests): requests to QueryF that do not decode (garbage, a missing setId, a
// field of the wrong type), or name a function it does not have, are answered with the TARS
// error codes, and the registry goes on answering good queries on the same connection.
func TestMalformedQueryF(t *testing.T) {
	a := backend(t, "App.S.EchoObj", "a")
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, fmt.Sprintf("[objects]\n\"App.S.EchoObj\" = [%q]\n", a))
	r := startRegistry(t, devregistry.Options{File: path})
	comm := client(t, r, "")
	sp, err := comm.Proxy(r.Locator())
	if err != nil {
		t.Fatal(err)
	}
	var onlyID codec.Encoder // findObjectByIdInSameSet without its setId (tag 2)
	onlyID.WriteString(1, "App.S.EchoObj")
	var wrongType codec.Encoder // id as an int
	wrongType.WriteInt32(1, 7)
	for _, tc := range []struct {
		fn   string
		body []byte
		code int32
	}{
		{"findObjectByIdInSameSet", onlyID.Buf, codec.RetServerDecode},
		{"findObjectByIdInSameGroup", wrongType.Buf, codec.RetServerDecode},
		{"findObjectById", []byte{0xff, 0xff, 0xff, 0xff, 0x01}, codec.RetServerDecode},
		{"findObjectById", nil, codec.RetServerDecode},
		{"registerServer", onlyID.Buf, codec.RetNoFunc},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := sp.InvokeRaw(ctx, tc.fn, tc.body)
		cancel()
		var se *communicator.ServerError
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Errorf("%s(% x): %v; want a server error %d", tc.fn, tc.body, err, tc.code)
		}
	}
	q := queryf.NewQueryFProxy(sp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ret, act, _, err := q.FindObjectByIdInSameGroup(ctx, "App.S.EchoObj")
	if err != nil || ret != 0 || len(act) != 1 {
		t.Errorf("a good query after the bad ones: %d %v %v; want 0 and one endpoint", ret, act, err)
	}
}

// TestConcurrentRegisterQuery (a guard: no other test registers and queries at
// once): registrations, renewals, deregistrations and QueryF
// queries of the same objects at once (run with -race): every query answers 0, and once the
// writers are done the lists are exactly what remains registered.
func TestConcurrentRegisterQuery(t *testing.T) {
	r := startRegistry(t, devregistry.Options{HTTPAddr: "127.0.0.1:0"})
	comm := client(t, r, "")
	q := new(queryf.QueryFProxy)
	if err := comm.StringToProxy(r.Locator(), q); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 8, 30
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for w := range writers {
		wg.Go(func() {
			ctx := context.Background()
			for i := range rounds {
				ep := fmt.Sprintf("tcp -h 127.0.0.1 -p %d -s app.sz.%d", 20000+w*100+i, w%2)
				if err := devregistry.Register(ctx, r.HTTPURL(), "App.S.ConcObj", ep, time.Minute); err != nil {
					errs <- err
					return
				}
				if i%2 == 1 {
					if err := devregistry.Deregister(ctx, r.HTTPURL(), "App.S.ConcObj", ep); err != nil {
						errs <- err
						return
					}
				}
			}
		})
		wg.Go(func() {
			for range rounds {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				ret, _, _, err := q.FindObjectByIdInSameSet(ctx, "App.S.ConcObj", "app.sz.1")
				cancel()
				// -1 while set app is deployed but app.sz.1 has no endpoint yet (TARS's answer).
				if err != nil || ret != 0 && ret != -1 {
					errs <- fmt.Errorf("query: ret %d, %v", ret, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ret, act, _, err := q.FindObjectByIdInSameGroup(ctx, "App.S.ConcObj")
	if err != nil || ret != 0 || len(act) != writers*rounds/2 {
		t.Errorf("after the writers: ret %d, %d endpoints, %v; want 0 and %d", ret, len(act), err, writers*rounds/2)
	}
	ret, act, _, err = q.FindObjectByIdInSameSet(ctx, "App.S.ConcObj", "app.sz.1")
	if err != nil || ret != 0 || len(act) != writers*rounds/4 {
		t.Errorf("set app.sz.1 after the writers: ret %d, %d endpoints, %v; want 0 and %d", ret, len(act), err, writers*rounds/4)
	}
}
