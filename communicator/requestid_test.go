package communicator_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
)

// TestRequestIDsPerConnection checks the request-id scheme (adapterproxy/pending.go) as the
// server sees it: each connection's AdapterProxy numbers the calls it sends from 1 up, in the
// order it sends them, and no request reaches the server with the placeholder the caller
// encoded (codec.RequestIDUnassigned) or with 0, the id of a server push.
func TestRequestIDsPerConnection(t *testing.T) {
	const calls = 200
	seen := make(chan *server.Current, calls)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 2; c.KeepAliveInterval = 0 })
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	for i := range calls {
		if _, err := sayHello(ctx, sp, "id", uint64(i)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	last := map[string]int32{} // by client address: one connection per net thread
	for range calls {
		cur := <-seen
		id, conn := cur.RequestID, cur.RemoteAddr.String()
		if id <= 0 || id == codec.RequestIDUnassigned {
			t.Fatalf("the server saw request id %d on %s", id, conn)
		}
		prev, ok := last[conn]
		if !ok && id > 2 {
			t.Errorf("first request on %s has id %d, want 1 (or 2 after a probe)", conn, id)
		}
		if ok && id <= prev {
			t.Errorf("on %s id %d after %d: not increasing", conn, id, prev)
		}
		last[conn] = id
	}
	if len(last) != 2 {
		t.Errorf("calls arrived on %d connections, want 2 (one per net thread)", len(last))
	}
}
