package codec

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
)

// The protocol test vectors: whole frames captured from a live
// TarsGo v1.4.6 server.
const (
	echoServant  = "Anchor.EchoServer.EchoPbObj"
	echoTarsObj  = "Anchor.EchoServer.EchoTarsObj"
	echoPbBodyHx = "0a0568656c6c6f1007" // EchoReq{data:"hello", seq:7}

	vecReq1        = "0000004110012c3c4001561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c"
	vecRsp1        = "0000001a10012c30014c5c6d0000090a0568656c6c6f1007780c"
	vecReq2Ctx     = "0000004810012c3c4002561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb898000106016b160176a80c"
	vecRspNoFunc   = "0000002010012c30034c50016d000c780c860d66756e63206d69736d61746368"
	vecReqOneway   = "00000042100120013c4007561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c"
	vecReqPing     = "0000003c10012c3c4006561b416e63686f722e4563686f5365727665722e4563686f50624f626a6609746172735f70696e677d000c810bb8980ca80c"
	vecRspPing     = "0000001010012c30064c5c6d000c780c"
	vecReqTarsEcho = "0000004310012c3c4009561d416e63686f722e4563686f5365727665722e4563686f546172734f626a66046563686f7d0000091d00000568656c6c6f810bb8980ca80c"
	vecRspTarsEcho = "0000001b10012c30094c5c6d00000a0c2d00000568656c6c6f780c"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func mustUnhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var requestVectors = []struct {
	name string
	hex  string
	pkt  RequestPacket
}{
	{
		name: "echo id 1",
		hex:  vecReq1,
		pkt: RequestPacket{Version: VersionTars, PacketType: PacketNormal, RequestID: 1,
			ServantName: echoServant, FuncName: "Echo", Buffer: mustUnhex(echoPbBodyHx), Timeout: 3000},
	},
	{
		name: "echo id 2 with context",
		hex:  vecReq2Ctx,
		pkt: RequestPacket{Version: VersionTars, PacketType: PacketNormal, RequestID: 2,
			ServantName: echoServant, FuncName: "Echo", Buffer: mustUnhex(echoPbBodyHx), Timeout: 3000,
			Context: map[string]string{"k": "v"}},
	},
	{
		name: "one-way id 7",
		hex:  vecReqOneway,
		pkt: RequestPacket{Version: VersionTars, PacketType: PacketOneway, RequestID: 7,
			ServantName: echoServant, FuncName: "Echo", Buffer: mustUnhex(echoPbBodyHx), Timeout: 3000},
	},
	{
		name: "tars_ping id 6",
		hex:  vecReqPing,
		pkt: RequestPacket{Version: VersionTars, PacketType: PacketNormal, RequestID: 6,
			ServantName: echoServant, FuncName: FuncPing, Timeout: 3000},
	},
	{
		name: ".tars echo id 9",
		hex:  vecReqTarsEcho,
		pkt: RequestPacket{Version: VersionTars, PacketType: PacketNormal, RequestID: 9,
			ServantName: echoTarsObj, FuncName: "echo", Buffer: mustUnhex("1d00000568656c6c6f"), Timeout: 3000},
	},
}

var responseVectors = []struct {
	name string
	hex  string
	pkt  ResponsePacket
}{
	{
		name: "echo id 1",
		hex:  vecRsp1,
		pkt:  ResponsePacket{Version: VersionTars, RequestID: 1, Buffer: mustUnhex(echoPbBodyHx)},
	},
	{
		name: "func mismatch id 3",
		hex:  vecRspNoFunc,
		pkt:  ResponsePacket{Version: VersionTars, RequestID: 3, Ret: 1, ResultDesc: "func mismatch"},
	},
	{
		name: "tars_ping id 6",
		hex:  vecRspPing,
		pkt:  ResponsePacket{Version: VersionTars, RequestID: 6, Ret: RetOK},
	},
	{
		name: ".tars echo id 9",
		hex:  vecRspTarsEcho,
		pkt:  ResponsePacket{Version: VersionTars, RequestID: 9, Buffer: mustUnhex("0c2d00000568656c6c6f")},
	},
}

func TestVectorsEncodeRequest(t *testing.T) {
	for _, tc := range requestVectors {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendRequest(nil, &tc.pkt)
			if want := unhex(t, tc.hex); !bytes.Equal(got, want) {
				t.Errorf("AppendRequest:\n got %x\nwant %x", got, want)
			}
		})
	}
}

func TestVectorsDecodeRequest(t *testing.T) {
	for _, tc := range requestVectors {
		t.Run(tc.name, func(t *testing.T) {
			var got RequestPacket
			if err := DecodeRequest(unhex(t, tc.hex), &got); err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			if !reflect.DeepEqual(got, tc.pkt) {
				t.Errorf("DecodeRequest:\n got %+v\nwant %+v", got, tc.pkt)
			}
		})
	}
}

func TestVectorsDecodeResponse(t *testing.T) {
	for _, tc := range responseVectors {
		t.Run(tc.name, func(t *testing.T) {
			var got ResponsePacket
			if err := DecodeResponse(unhex(t, tc.hex), &got); err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.pkt) {
				t.Errorf("DecodeResponse:\n got %+v\nwant %+v", got, tc.pkt)
			}
		})
	}
}

// TarsGo writes responses the way ResponsePacket.Encode does, so encoding
// the decoded vectors gives back the captured bytes.
func TestVectorsEncodeResponse(t *testing.T) {
	for _, tc := range responseVectors {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendResponse(nil, &tc.pkt)
			if want := unhex(t, tc.hex); !bytes.Equal(got, want) {
				t.Errorf("AppendResponse:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// The body of the .tars echo call: parameters from tag 1 in the request,
// the return value at tag 0 and the out-parameter at its tag in the reply.
func TestVectorsTarsEchoBody(t *testing.T) {
	var req RequestPacket
	if err := DecodeRequest(unhex(t, vecReqTarsEcho), &req); err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	in, err := NewDecoder(req.Buffer).ReadBytes(1, true)
	if err != nil || string(in) != "hello" {
		t.Errorf("request body tag 1: got %q, %v; want %q, nil", in, err, "hello")
	}

	var rsp ResponsePacket
	if err := DecodeResponse(unhex(t, vecRspTarsEcho), &rsp); err != nil {
		t.Fatalf("DecodeResponse: %v", err)
	}
	d := NewDecoder(rsp.Buffer)
	ret, err := d.ReadInt32(0, true)
	if err != nil || ret != 0 {
		t.Errorf("reply body tag 0: got %d, %v; want 0, nil", ret, err)
	}
	out, err := d.ReadBytes(2, true)
	if err != nil || string(out) != "hello" {
		t.Errorf("reply body tag 2: got %q, %v; want %q, nil", out, err, "hello")
	}
	if d.Len() != 0 {
		t.Errorf("reply body: %d bytes left unread, want 0", d.Len())
	}

	// The same body, encoded by us.
	var e Encoder
	e.WriteInt32(0, 0)
	e.WriteBytes(2, []byte("hello"))
	if !bytes.Equal(e.Buf, rsp.Buffer) {
		t.Errorf("encoded reply body:\n got %x\nwant %x", e.Buf, rsp.Buffer)
	}
}
