package communicator_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
)

// javaStyleReply encodes a reply as TarsJava's server writes one (TarsCodec.encodeResponse):
// tags 1 to 6, status (tag 7) only when the request's status was decoded (never for tars_ping,
// whose body the server does not read), a description (tag 8) only for an error.
func javaStyleReply(req *codec.RequestPacket, body []byte) []byte {
	e := codec.Encoder{Buf: []byte{0, 0, 0, 0}}
	e.WriteInt16(1, req.Version)
	e.WriteInt8(2, req.PacketType)
	e.WriteInt32(3, req.RequestID)
	e.WriteInt32(4, req.MessageType)
	e.WriteInt32(5, codec.RetOK)
	e.WriteBytes(6, body)
	n := len(e.Buf)
	e.Buf[0], e.Buf[1], e.Buf[2], e.Buf[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return e.Buf
}

// TestRepliesWithoutStatus calls a peer that answers as TarsJava's server does: without tag 7
// (status) in its replies, which TarsJava writes only when it is not null and leaves out of every
// tars_ping reply. Calls and keepalive pings must succeed on one connection.
// Before, the client required tag 7, as TarsGo's and TarsCpp's readers do: every such reply was a
// protocol error that closed the connection and failed the call.
func TestRepliesWithoutStatus(t *testing.T) {
	var pings, hellos atomic.Int64
	raw := startRawServer(t, func(req *codec.RequestPacket, w net.Conn) bool {
		var body []byte
		switch req.FuncName {
		case codec.FuncPing:
			pings.Add(1)
		default:
			hellos.Add(1)
			full := helloReply(req, req.RequestID, "java")
			var p codec.ResponsePacket
			if err := codec.DecodeResponse(full, &p); err != nil {
				t.Errorf("decoding the test's own reply: %v", err)
				return false
			}
			body = p.Buffer
		}
		if req.PacketType == codec.PacketOneway {
			return true
		}
		_, err := w.Write(javaStyleReply(req, body))
		return err == nil
	})
	comm := newComm(t, faultConf(func(c *conf.Config) { c.KeepAliveInterval = 100 * time.Millisecond }))
	sp := proxyToAddrs(t, comm, raw.endpoint())
	ctx := testCtx(t)
	for i := range 5 {
		from, err := sayHello(ctx, sp, "x", uint64(i))
		if err != nil || from != "java" {
			t.Fatalf("call %d: from %q, err %v; want the reply from \"java\"", i, from, err)
		}
		if err := callOnce(t, ctx, asyncCall, sp, uint64(100+i), 5*time.Second); err != nil {
			t.Fatalf("async call %d: %v", i, err)
		}
	}
	if err := sp.Ping(ctx); err != nil {
		t.Fatalf("tars_ping answered without status: %v", err)
	}
	p0 := pings.Load()
	eventually(t, 5*time.Second, "keepalive pings on the idle connection", func() bool { return pings.Load() >= p0+3 })
	if from, err := sayHello(ctx, sp, "after pings", 99); err != nil || from != "java" {
		t.Fatalf("call after keepalive pings: from %q, err %v", from, err)
	}
	if got := raw.accepts.Load(); got != 1 {
		t.Errorf("the peer accepted %d connections, want 1: a reply without status must not cost the connection", got)
	}
	if got := hellos.Load(); got != 11 {
		t.Errorf("the peer ran %d SayHello calls, want 11", got)
	}
}
