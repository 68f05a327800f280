package devregistry_test

import (
	"path/filepath"
	"testing"

	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// TestSetNameNotDeployedFallsBack: a servant deployed in sets of one set name ("other.sz.1") is
// called by a client whose set is of another name ("app.sz.1"): by the TARS registry's rules, as
// naming.SelectSet states them and every other source applies them, that client gets every
// endpoint. devregistry used to treat the object as deployed in sets because some endpoint had
// some set, and answered an empty list (ErrNoEndpoint where a naming file's same line served).
func TestSetNameNotDeployedFallsBack(t *testing.T) {
	x := backend(t, "App.S.OtherSetObj", "x")
	line := "App.S.OtherSetObj@" + x + " -s other.sz.1\n"

	// What the shared rule gives a client of set app.sz.1.
	ep, err := endpoint.ParseEndpoint(x + " -s other.sz.1")
	if err != nil {
		t.Fatal(err)
	}
	if sel := naming.SelectSet([]endpoint.Endpoint{ep}, "app.sz.1"); len(sel) != 1 {
		t.Fatalf("naming.SelectSet gives %v, want the endpoint (set name app not deployed)", sel)
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "objs"), line)
	r := startRegistry(t, devregistry.Options{File: dir})
	comm := client(t, r, "enableset = true\nsetdivision = \"app.sz.1\"\n")
	got, err := who(t, comm, "App.S.OtherSetObj")
	if err != nil || got != "x" {
		t.Fatalf("client of set app.sz.1 through devregistry: %q, %v; want an answer from x, as naming.SelectSet "+
			"(the TARS registry's rule: set name app is not deployed, so every endpoint) gives", got, err)
	}
}
