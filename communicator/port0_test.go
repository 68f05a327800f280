package communicator_test

import (
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestClientPortZeroRefused: "-p 0" means "a port the system picks" only to a server that
// listens; a client cannot connect to port 0, so a proxy string whose endpoint says -p 0 can
// never make a call. The registry path already refuses such an endpoint (naming/registry
// rejects EndpointF with port <= 0, devregistry and etcd's Register refuse port 0), but
// StringToProxy binds it and every call then fails at connect time, far from the typo
// ("-p 0" for a port left out of a template, say). It is refused at once, as TarsCpp's
// stringToProxy throws on a bad string, with an error naming the endpoint's port (before, it was
// accepted; a naming source's port-0 endpoint is left out of the list with a warning).
func TestClientPortZeroRefused(t *testing.T) {
	c := newComm(t, nil)
	var sp servantproxy.ServantProxy
	const proxy = "App.S.Obj@tcp -h 127.0.0.1 -p 0 -t 3000"
	err := c.StringToProxy(proxy, &sp)
	if err == nil || !strings.Contains(err.Error(), "port") || !strings.Contains(err.Error(), "0") {
		t.Fatalf("StringToProxy(%q) = %v; want a refusal naming the port 0 "+
			"(a client cannot connect to port 0: every call of this proxy would fail)", proxy, err)
	}
}
