package communicator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestMaxConnsCloseNamesTheLimit: a plain-TCP tarscomm server at its maxconns
// (server.WithMaxConns, TarsCpp's adapter key) closes a connection accepted beyond it at once; a
// client with connections = 2 to a server with maxconns = 1 loses the call it wrote on its second
// connection (retries = 0: it was written). The error the caller gets names the connection limit
// among the causes. Before, it named only TLS ("a TLS server does that to a plain TCP client; if
// the endpoint speaks TLS, declare it ssl, not tcp"), wrong here, and sent the user to change tcp
// to ssl (found by a review of backpressure).
func TestMaxConnsCloseNamesTheLimit(t *testing.T) {
	srv, addr := startEcho(t, "server", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	}, server.WithMaxConns(1))
	comm := newComm(t, func(c *conf.Config) {
		c.SyncInvokeTimeout = live
		c.Servants = map[string]conf.Servant{servant: {Connections: 2}}
	})
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+tcpEndpoint(addr), &sp); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	fails := 0
	var first error
	for i := range 300 {
		if _, err := sp.InvokeRaw(ctx, "Echo", []byte("x")); err != nil {
			fails++
			if first == nil {
				first = err
			}
		}
		if i%10 == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("%d of 300 calls failed; first: %v; server %+v", fails, first, srv.LimitStats())
	if first == nil {
		t.Fatal("no call failed: the test did not meet the server's maxconns")
	}
	if msg := first.Error(); !strings.Contains(msg, "maxconns") && !strings.Contains(msg, "connection limit") {
		t.Errorf("a call lost to a connection the server closed at its maxconns: the error names TLS as the cause and no connection limit: %q", msg)
	}
}
