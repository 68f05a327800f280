package devregistry_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/devregistry"
)

// TestUnregisteredObjectError: a client with a locator calls an object the registry does not
// know (a typo in the servant name, or a server that has not registered yet). The call fails
// with ErrNoEndpoint, and its message says where the empty list came from: the locator, and the
// object. Before, it was only "tarscomm: Hello.GreeterServer.GreetObj.greet after 3ms: no
// endpoint for servant" (found by a review following the docs).
func TestUnregisteredObjectError(t *testing.T) {
	r := startRegistry(t, devregistry.Options{})
	comm := client(t, r, "")
	_, err := who(t, comm, "Hello.GreeterServer.GreetObj")
	if !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Fatalf("err = %v; want ErrNoEndpoint", err)
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.Contains(msg, r.Locator()) || !strings.Contains(msg, "Hello.GreeterServer.GreetObj (none under that name") {
		t.Errorf("err = %q; want it to say where the empty endpoint list came from (the registry %s answered none for the object)", msg, r.Locator())
	}
}
