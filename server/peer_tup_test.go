package server

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// nodeReadTupReply reads frame as TarsNode's client (@tars/rpc, core/rpc-tars/tars-client.js)
// reads every reply on a TUP connection (iVersion 2, "tup-complex", or 3, "tup-simple"): as a
// RequestPacket whose tags 1 to 10 are all required (RequestF.js _readFrom), the call found by
// iRequestId (tag 4), its code in status STATUS_RESULT_CODE.
func nodeReadTupReply(frame []byte) (id int32, status map[string]string, err error) {
	d := codec.NewDecoder(frame[codec.HeaderLen:])
	if _, err = d.ReadInt16(1, true); err != nil {
		return
	}
	if _, err = d.ReadInt8(2, true); err != nil {
		return
	}
	if _, err = d.ReadInt32(3, true); err != nil {
		return
	}
	if id, err = d.ReadInt32(4, true); err != nil {
		return
	}
	if _, err = d.ReadString(5, true); err != nil {
		return
	}
	if _, err = d.ReadString(6, true); err != nil {
		return
	}
	if _, err = d.ReadBytesView(7, true); err != nil {
		return
	}
	if _, err = d.ReadInt32(8, true); err != nil {
		return
	}
	if _, err = d.ReadStringMap(9, true); err != nil {
		return
	}
	status, err = d.ReadStringMap(10, true)
	return
}

// TestTupVersion2Refusal: TUP comes in two versions, 2 (TarsJava's VERSION2, TarsNode's
// TUP_COMPLEX) and 3. TarsJava's server (TarsCodec.encodeResponse) and TarsNode's
// (tars-server.js compose) answer both with a RequestPacket-shaped reply, and TarsNode's client
// reads the replies of either as one. The server refuses both so.
// Before, a version 2 request was refused with a ResponsePacket: the client read iRet (an int)
// where it needs sServantName (a string), and could not read the reply (TarsNode's feed throws
// from its socket's data handler); read at the offsets it expects, the id was not the request's
// either (found by a review of peers other than TarsGo and TarsCpp).
func TestTupVersion2Refusal(t *testing.T) {
	leakCheck(t)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Echo", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		})
	})
	c := dial(t, addr)
	for i, v := range []int16{3, 2} {
		// The body is an empty UniAttribute (an empty map at tag 0), as @tars/stream writes it.
		r := request(int32(100+i), "App.S.Obj", "Echo", []byte{0x08, 0x0c})
		r.Version = v
		c.write(codec.AppendRequest(nil, r))
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("iVersion %d: no reply: %v", v, err)
		}
		id, st, err := nodeReadTupReply(f)
		if err != nil {
			t.Errorf("iVersion %d: a TUP client cannot read the refusal %x: %v", v, f, err)
			continue
		}
		if id != r.RequestID || st["STATUS_RESULT_CODE"] != "-1" {
			t.Errorf("iVersion %d: refusal for id %d with STATUS_RESULT_CODE %q; want id %d, code -1",
				v, id, st["STATUS_RESULT_CODE"], r.RequestID)
		}
	}
}
