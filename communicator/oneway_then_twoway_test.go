package communicator_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// TestOnewayThenTwoWayLossIsNoRefusedConnect: a connection that carried one-way calls for
// longer than the connect window (max(connect-timeout, 1 s)) and is lost while its first two-way
// call waits (its server restarting, say) is a lost connection, not a refused connect: that call
// fails with ErrConnection and the next one reconnects at once. Before, no reply had proven the
// connection, so its loss counted as a refused connect: the next call failed at once with "not
// reconnecting yet" and the hint that the endpoint may be a TLS server, the endpoint out of
// rotation as after a failed connect.
func TestOnewayThenTwoWayLossIsNoRefusedConnect(t *testing.T) {
	rs := serveRaw(t, listenLoopback(t), func(n int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			if req.PacketType == codec.PacketOneway {
				return true
			}
			if n == 1 {
				return false // the first connection goes down with its first two-way call
			}
			_, err := c.Write(replyFrame(req, req.RequestID, []byte("ok")))
			return err == nil
		})
	})
	comm := newComm(t, func(c *conf.Config) { c.ConnectTimeout = 200 * time.Millisecond }) // the window: 1 s
	sp := proxyToAddrs(t, comm, tcpEndpoint(rs.addr()))
	ctx := testCtx(t)
	for i := range 5 {
		if err := sp.InvokeOnewayRaw(ctx, "log", []byte{byte(i)}); err != nil {
			t.Fatalf("one-way call %d: %v", i, err)
		}
	}
	time.Sleep(1200 * time.Millisecond) // the connection outlives the window
	_, err := sp.InvokeRaw(ctx, "first", nil)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("the two-way call on the connection its server closed: %v, want ErrConnection", err)
	}
	if strings.Contains(err.Error(), "TLS") {
		t.Errorf("the lost connection reported with the TLS hint: %v", err)
	}
	body, err := sp.InvokeRaw(ctx, "again", nil)
	if err != nil || string(body) != "ok" {
		t.Fatalf("the next call, on a new connection: %q, %v; want it to reconnect at once and be answered", body, err)
	}
}
