package server

import (
	"errors"
	"syscall"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
)

// TestUDPSecondServerSamePort: a second server started on the udp port a running server serves
// fails with "address already in use", as on tcp, and the running server goes on answering. It
// used to start (gnet binds udp sockets with SO_REUSEPORT), and the kernel split the clients
// between the two servers.
func TestUDPSecondServerSamePort(t *testing.T) {
	first, c := startUDP(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) })
	second := New(WithLogger(zaptest.NewLogger(t)))
	mustHandle(t, second, pbServant, "Echo", echo)
	if _, err := second.Start("udp://" + first.Addr().String()); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("a second server on %v: Start = %v, want address already in use", first.Addr(), err)
	}
	if rsp := callUDP(t, c, request(1, pbServant, "Echo", []byte("hi"))); rsp.Ret != codec.RetOK || string(rsp.Buffer) != "hi" {
		t.Fatalf("the first server after the refused start: ret %d body %q", rsp.Ret, rsp.Buffer)
	}
}
