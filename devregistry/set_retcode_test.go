package devregistry_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/protocol/queryf"
)

// TestSetNoServerAnswersMinusOne: the TARS registry (TarsFramework QueryImp.cpp
// findObjectByIdInSameSet) answers -1, not 0 with empty lists, when the object is deployed in
// sets of the asked set name but no server is in the asked set nor in its area's wildcard group
// (DbHandle returns -2, QueryImp maps it to -1), and when the set's name or area is "*". A client
// tells the two apart: TarsCpp's EndpointManager takes a non-zero return as a failure (reads the
// endpoint cache when it knows nothing, retries in 2s) and an empty active list as an answer
// (retry in 10s); tarscomm's registry source too (an empty first answer fails calls at once with
// ErrNoEndpoint, a failure lets them wait). devregistry's doc says clients cannot tell it from
// TARS's registry for naming, and it answers -1 there too now (before: 0 with empty lists, and
// every endpoint for a set name "*").
func TestSetNoServerAnswersMinusOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.toml")
	writeFile(t, path, `
[objects]
"App.S.Obj" = ["tcp -h 127.0.0.1 -p 9002 -s app.sz.1"]
`)
	r := startRegistry(t, devregistry.Options{File: path})
	comm := client(t, r, "")
	q := new(queryf.QueryFProxy)
	if err := comm.StringToProxy(r.Locator(), q); err != nil {
		t.Fatal(err)
	}
	why := map[string]string{
		"app.sh.1": "set name app is deployed, no server in app.sh.1 nor app.sh.*",
		"app.sh.*": "set name app is deployed, no server in area app.sh",
		"app.*.1":  `the area is "*": a malformed set id`,
		"*.sz.1":   `the set name is "*": a malformed set id`,
	}
	for _, set := range []string{"app.sh.1", "app.sh.*", "app.*.1", "*.sz.1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ret, act, inact, err := q.FindObjectByIdInSameSet(ctx, "App.S.Obj", set)
		cancel()
		if err != nil || ret != -1 {
			t.Errorf("findObjectByIdInSameSet(App.S.Obj, %q) = %d, %d active, %d inactive, err %v; "+
				"want -1, as TARS's registry answers (%s)", set, ret, len(act), len(inact), err, why[set])
		}
	}
}
