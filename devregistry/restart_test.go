package devregistry_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/devregistry"
)

// TestRegistryRestart (a guard: no other test restarts the registry): the registry a client follows stops and starts again on the same
// address with another list (a restart with a changed deployment): the client keeps calling its
// last list while the registry is down, and moves to the new list once the registry is back.
func TestRegistryRestart(t *testing.T) {
	a := backend(t, "App.S.RestartObj", "a")
	b := backend(t, "App.S.RestartObj", "b")
	dir := t.TempDir()
	p1 := filepath.Join(dir, "one.toml")
	writeFile(t, p1, fmt.Sprintf("[objects]\n\"App.S.RestartObj\" = [%q]\n", a))
	r1, err := devregistry.Start(devregistry.Options{File: p1})
	if err != nil {
		t.Fatal(err)
	}
	comm := client(t, r1, "")
	eventually(t, comm, "App.S.RestartObj", "a")
	_, port, _ := net.SplitHostPort(mustAddr(t, r1.Locator()))
	within(t, "registry 1 Close", r1.Close)

	// Down for a few refreshes: the last list stays.
	time.Sleep(1500 * time.Millisecond)
	eventually(t, comm, "App.S.RestartObj", "a")

	p2 := filepath.Join(dir, "two.toml")
	writeFile(t, p2, fmt.Sprintf("[objects]\n\"App.S.RestartObj\" = [%q]\n", b))
	startRegistry(t, devregistry.Options{File: p2, QueryAddr: "127.0.0.1:" + port})
	eventually(t, comm, "App.S.RestartObj", "b")
}

// mustAddr returns "host:port" of a locator "Obj@tcp -h host -p port".
func mustAddr(t *testing.T, locator string) string {
	t.Helper()
	var obj, host string
	var port int
	if _, err := fmt.Sscanf(locator, "%s -h %s -p %d", &obj, &host, &port); err != nil {
		t.Fatalf("locator %q: %v", locator, err)
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}
