package server

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// javaReadResponse reads frame as TarsJava's client does (TarsCodec.decodeResponse, in the
// releases v1.7.2 to v1.7.4): iVersion, cPacketType, iRequestId, iMessageType and iRet (tags 1 to
// 5) are required; when iRet is not 0, so is sResultDesc (tag 8, read as a required string). A
// missing required field throws TarsDecodeException, a RuntimeException that TCPSession.readResponse
// does not catch: the Reactor closes the connection (disConnectWithException), and every call
// pending on it is lost, the refused one included, without its code.
func javaReadResponse(frame []byte) (id, ret int32, remark string, err error) {
	d := codec.NewDecoder(frame[codec.HeaderLen:])
	if _, err = d.ReadInt16(1, true); err != nil {
		return
	}
	if _, err = d.ReadInt8(2, true); err != nil {
		return
	}
	if id, err = d.ReadInt32(3, true); err != nil {
		return
	}
	if _, err = d.ReadInt32(4, true); err != nil {
		return
	}
	if ret, err = d.ReadInt32(5, true); err != nil || ret == 0 {
		return
	}
	remark, err = d.ReadString(8, true)
	return
}

// TestErrorReplyHasResultDesc: a handler refusing a call with a code and no description
// (&Error{Code: 1001}, a service's own code, or a framework code such as -6) is answered with an
// empty sResultDesc (tag 8): TarsJava's client (v1.7.2 to v1.7.4, TarsCodec.decodeResponse) reads
// tag 8 as required whenever iRet is not 0 (TarsJava's own server always writes it then, "" when
// it has no remark). The raw peer writes the request as TarsJava's encodeRequest does (tags 1 to
// 10, all present) and reads the reply with TarsJava's rules.
// Before, ResponsePacket.Encode wrote tag 8 only when non-empty: TarsJava's client could not read
// the reply, closed the connection, and the caller never saw the code (found by a review of
// peers other than TarsGo and TarsCpp).
func TestErrorReplyHasResultDesc(t *testing.T) {
	leakCheck(t)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Refuse", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			return nil, &Error{Code: codec.RetQueueTimeout}
		})
		mustHandle(t, s, "App.S.Obj", "Business", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			return nil, &Error{Code: 1001}
		})
	})
	c := dial(t, addr)
	cases := []struct {
		fn   string
		body []byte
		want int32
	}{
		{"Business", nil, 1001},
		{"Refuse", nil, codec.RetQueueTimeout}, // a framework code the service answers with
	}
	for i, tc := range cases {
		req := request(int32(i+1), "App.S.Obj", tc.fn, tc.body)
		c.write(codec.AppendRequest(nil, req))
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("%s: no reply: %v", tc.fn, err)
		}
		id, ret, _, err := javaReadResponse(f)
		if err != nil {
			t.Errorf("%s: TarsJava's client cannot read the reply %x (iRet %d without sResultDesc): %v",
				tc.fn, f, ret, err)
			continue
		}
		if id != req.RequestID || ret != tc.want {
			t.Errorf("%s: reply id %d ret %d, want id %d ret %d", tc.fn, id, ret, req.RequestID, tc.want)
		}
	}
}
