package communicator_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
)

// TestUDPAuthFromNamingLeftOut: a udp endpoint with -e 1 (TARS authentication) given in the
// proxy string is refused by StringToProxy/Proxy ("udp has no connection to authenticate"). The
// same endpoint delivered by naming (here a naming file) must not be called without the
// handshake either: the client is configured to authenticate that servant's endpoints, and a
// call that goes out unauthenticated sends the request (and the caller's data) to a peer that
// never proved it knows the secret. Expected: the call fails with an error, and the server
// receives nothing: the endpoint is left out of the list (Communicator.callable). Before, the call
// was sent over plain udp and answered.
func TestUDPAuthFromNamingLeftOut(t *testing.T) {
	u := startUDPServer(t)
	ep := udpEndpoint(u.addr) + " -e 1"

	// The direct form is refused: the rule the naming path should follow too.
	comm0 := newComm(t, func(c *conf.Config) {
		c.Auth = conf.Auth{AccessKey: "ak", SecretKey: "sk"}
	})
	if _, err := comm0.Proxy(udpServant + "@" + ep); err == nil {
		t.Fatalf("Proxy(%q) accepted a udp -e 1 endpoint; the direct form is expected to be refused", ep)
	}

	path := filepath.Join(t.TempDir(), "naming.txt")
	if err := os.WriteFile(path, []byte(udpServant+"@"+ep+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	comm := newComm(t, func(c *conf.Config) {
		c.NamingFile = path
		c.Auth = conf.Auth{AccessKey: "ak", SecretKey: "sk"}
	})
	sp, err := comm.Proxy(udpServant)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sp.InvokeRaw(testCtx(t), "echo", []byte("secret payload"), withTimeout(3*time.Second)...)
	if n := u.calls.Load(); n != 0 || err == nil {
		t.Fatalf("udp -e 1 endpoint from naming: call returned (%q, %v) and the server ran %d calls; "+
			"want the call refused (no authentication is possible on udp) and nothing sent", out, err, n)
	}
	t.Logf("refused as expected: %v", err)
}
