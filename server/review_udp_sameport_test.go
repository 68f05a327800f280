package server

import (
	"context"
	"net"
	"testing"

	"go.uber.org/zap/zaptest"
)

// TestReviewUDPSecondServerSamePort shows that Start("udp://host:port") succeeds on a port
// another running server already serves. Over tcp the same second Start fails with "address
// already in use"; over udp gnet always sets SO_REUSEPORT on its sockets (gnet.go: "If there is
// UDP address in the list, we have no choice but to enable SO_REUSEPORT"), so a second server of
// the same user (a second instance started by mistake, an old process that has not exited) binds
// the port silently and the kernel splits the clients between the two: here some of 32 client
// sockets are answered by the second server. Bug: server/server.go Start (the udp branch hands
// the address to gnet.Run, line ~265) never checks that the port is free.
func TestReviewUDPSecondServerSamePort(t *testing.T) {
	stop := func(s *Server) {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			_ = s.Stop(ctx)
		})
	}
	a := New(WithLogger(zaptest.NewLogger(t)))
	mustHandle(t, a, "App.S.Obj", "Who", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) { return append(rsp, 'A'), nil })
	addr, err := a.Start("udp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop(a)

	b := New(WithLogger(zaptest.NewLogger(t)))
	mustHandle(t, b, "App.S.Obj", "Who", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) { return append(rsp, 'B'), nil })
	_, errB := b.Start("udp://" + addr.String())
	stop(b)
	if errB == nil {
		fromB := 0
		for i := range 32 {
			c, err := net.DialUDP("udp", nil, addr.(*net.UDPAddr))
			if err != nil {
				t.Fatal(err)
			}
			rsp := callUDP(t, c, request(int32(i+1), "App.S.Obj", "Who", nil))
			_ = c.Close()
			if string(rsp.Buffer) == "B" {
				fromB++
			}
		}
		t.Fatalf("a second server started on udp %v, which a running server serves; %d of 32 clients were answered by the second one (tcp refuses: address already in use)", addr, fromB)
	}
}
