package communicator_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
)

// deadPortAfter returns a loopback port this test opened and closed (connections are
// refused) whose TARS sort key "1:127.0.0.1:<port>" sorts after that of port live: in the
// QueryF proxy's endpoint list (sorted in TarsCpp order) it is index 1, the first that round
// robin picks (its turn is pre-incremented, as in TarsCpp).
func deadPortAfter(t *testing.T, live string) int {
	t.Helper()
	for range 1000 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if strconv.Itoa(p) > live {
			return p
		}
	}
	t.Skip("no free port sorting after the registry's")
	return 0
}

// TestLocatorDeadFirstReachesSlowRetry: the locator lists a dead registry (connection
// refused, nothing sent) and a live one; the client has 4 net threads and one servant. Each
// query of the servant's watch goes to the next net thread (servantproxy round robin), whose
// QueryF object proxy has not tried the dead endpoint yet, so its round robin picks the dead one
// first again: 4 queries fail in a row (at 0, 2, 4, 6s) and the watch drops to the 30s retry of a
// registry that is down, although a live registry is listed and answers at once. TarsCpp queries
// from the servant's own net thread (its QueryF proxy there learnt the refused endpoint after one
// failure), and a refused (unsent) query is harmless to send to the other registry. The call,
// with a 10s deadline, is answered now: a query is hashed (one thread) and asked again at once
// after a lost connection. Before, it failed with "registry query failed (4 in a row)".
func TestLocatorDeadFirstReachesSlowRetry(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	reg := startRegistry(t, "")
	reg.set([]*greeter{a})
	host, port, _ := net.SplitHostPort(reg.addr)
	dead := deadPortAfter(t, port)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 4
		c.SyncInvokeTimeout = 30 * time.Second
		c.Locator = "tars.tarsregistry.QueryObj@tcp -h " + host + " -p " + port + ":tcp -h 127.0.0.1 -p " + strconv.Itoa(dead)
	})
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if from, err := sayHello(ctx, sp, "f", 1); err != nil || from != "a" {
		t.Fatalf("locator [live, dead(refused)], 4 net threads: call with a 10s deadline got from %q, err %v; "+
			"want it answered through the live registry (queries the dead one refused should not push the watch into its 30s retry)", from, err)
	}
}
