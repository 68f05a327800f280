package server

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestStopRefusesDials: once Stop began, a client dialling the server is refused (ECONNREFUSED),
// while a request on an open connection is still answered -9 "server is stopping" (a one-way one
// with a one-way refusal) and the handler Stop waits for still replies. The connection got the
// notice of the Stop (stoppingNotice) once. Before, the listener stayed open until the end of Stop:
// the dial succeeded and the server closed the connection at once, so a client that wrote calls
// on it lost them with a connection error instead of sending them elsewhere.
func TestStopRefusesDials(t *testing.T) {
	s, h, c, addr := heldServer(t)
	holdFirst(t, h, c) // held past the dials below, whatever they take
	stopped := beginStop(t, s)
	// The listener closes right after stopping is set: a dial may still be accepted meanwhile.
	var derr error
	for deadline := time.Now().Add(5 * time.Second); derr == nil; time.Sleep(5 * time.Millisecond) {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			derr = err
			break
		}
		_ = nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("dials still accepted 5s after Stop began")
		}
	}
	// Refused, or reset: a dial whose SYN the listener's queue held when it closed is reset (a
	// busy machine shows it); either way the client was not accepted.
	if !errors.Is(derr, syscall.ECONNREFUSED) && !errors.Is(derr, syscall.ECONNRESET) {
		t.Fatalf("dial during Stop: %v, want ECONNREFUSED (or ECONNRESET)", derr)
	}
	c.write(codec.AppendRequest(nil, request(2, pbServant, "Held", []byte("b"))))
	if rsp := c.recv(); rsp.RequestID != 2 || rsp.Ret != codec.RetOverload || rsp.ResultDesc != codec.StoppingDesc {
		t.Fatalf("request after Stop began: id %d ret %d %q, want 2 refused %d %q", rsp.RequestID, rsp.Ret, rsp.ResultDesc, codec.RetOverload, codec.StoppingDesc)
	}
	// A one-way request is answered too, with a one-way refusal (a client sending only one-way
	// calls learns the server is leaving); one with id 0, a push's, is not.
	for _, id := range []int32{0, 3} {
		ow := request(id, pbServant, "Held", []byte("c"))
		ow.PacketType = codec.PacketOneway
		c.write(codec.AppendRequest(nil, ow))
	}
	c.write(codec.AppendRequest(nil, request(4, pbServant, "Held", []byte("d"))))
	for _, id := range []int32{3, 4} {
		rsp := c.recv()
		wantType := codec.PacketNormal
		if id == 3 {
			wantType = codec.PacketOneway
		}
		if rsp.RequestID != id || rsp.PacketType != wantType || rsp.Ret != codec.RetOverload || rsp.ResultDesc != codec.StoppingDesc {
			t.Fatalf("refusal: id %d type %d ret %d %q, want id %d type %d ret %d %q", rsp.RequestID, rsp.PacketType, rsp.Ret, rsp.ResultDesc,
				id, wantType, codec.RetOverload, codec.StoppingDesc)
		}
	}
	close(h.release)
	if rsp := c.recv(); rsp.RequestID != 1 || rsp.Ret != codec.RetOK || string(rsp.Buffer) != "a" {
		t.Fatalf("held reply: id %d ret %d body %q", rsp.RequestID, rsp.Ret, rsp.Buffer)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	c.expectClosed()
	if c.notices != 1 {
		t.Fatalf("the connection got %d notices of the Stop, want 1", c.notices)
	}
}
