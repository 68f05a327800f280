package tarswire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// The baseline's codec must agree with tarscomm's on the wire, in both directions.

func TestRequestDecodesWithTarscommCodec(t *testing.T) {
	for _, size := range []int{0, 5, 300, 70000, 8 << 20} {
		body := bytes.Repeat([]byte{0xAB}, size)
		frame := AppendRequest(nil, 123456, "Bench.EchoServer.EchoObj", "Echo", body, 1000)
		var p codec.RequestPacket
		if err := codec.DecodeRequest(frame, &p); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if p.Version != 1 || p.RequestID != 123456 || p.ServantName != "Bench.EchoServer.EchoObj" ||
			p.FuncName != "Echo" || !bytes.Equal(p.Buffer, body) || p.Timeout != 1000 {
			t.Fatalf("size %d: decoded %+v", size, p)
		}
	}
}

func TestHeadBodyTailIsTheFrame(t *testing.T) {
	for _, size := range []int{0, 100, 1 << 16, 8 << 20} {
		body := bytes.Repeat([]byte{0x5A}, size)
		for _, timeout := range []int32{0, 100, 60000} {
			want := AppendRequest([]byte("x"), 77, "A.B.C", "Echo", body, timeout)
			head := AppendRequestHead([]byte("x"), 77, "A.B.C", "Echo", len(body), timeout)
			got := AppendRequestTail(append(head, body...), timeout)
			if !bytes.Equal(got, want) {
				t.Fatalf("size %d, timeout %d: head+body+tail differs from AppendRequest", size, timeout)
			}
			if n, err := FrameLen(got[1:], 16<<20); err != nil || n != len(got)-1 {
				t.Fatalf("size %d: FrameLen = %d, %v; want %d", size, n, err, len(got)-1)
			}
		}
	}
}

func TestResponseFromTarscommCodec(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   codec.ResponsePacket
	}{
		{"ok", codec.ResponsePacket{Version: 1, RequestID: -7, Buffer: []byte("hello"),
			Status: map[string]string{"a": "b"}, Context: map[string]string{"c": "d"}}},
		{"error", codec.ResponsePacket{Version: 1, RequestID: 70000, Ret: -3, ResultDesc: strings.Repeat("x", 300)}},
	} {
		frame := codec.AppendResponse(nil, &tc.in)
		n, err := FrameLen(frame, 1<<20)
		if err != nil || n != len(frame) {
			t.Fatalf("%s: FrameLen = %d, %v; want %d", tc.name, n, err, len(frame))
		}
		var r Response
		if err := DecodeResponse(frame, &r); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.RequestID != tc.in.RequestID || r.Ret != tc.in.Ret || !bytes.Equal(r.Body, tc.in.Buffer) || r.Desc != tc.in.ResultDesc {
			t.Fatalf("%s: decoded %+v from %+v", tc.name, r, tc.in)
		}
	}
}

func TestDecodeResponseRejectsTruncation(t *testing.T) {
	frame := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: 9, Buffer: []byte("payload")})
	for n := 5; n < len(frame); n++ {
		cut := append([]byte(nil), frame[:n]...)
		var r Response
		// Fields after the body are optional in TARS; a body cut short must fail.
		if err := DecodeResponse(cut, &r); err == nil && len(r.Body) > 0 && !bytes.Equal(r.Body, []byte("payload")) {
			t.Fatalf("truncated to %d bytes: decoded a partial body %q", n, r.Body)
		}
	}
}

func TestRequestFromTarscommCodec(t *testing.T) {
	for _, size := range []int{0, 5, 300, 70000} {
		in := codec.RequestPacket{Version: 1, PacketType: 1, MessageType: 0x10, RequestID: -5, ServantName: "A.B.CObj",
			FuncName: "Echo", Buffer: bytes.Repeat([]byte{0x3C}, size), Timeout: 3000,
			Context: map[string]string{"k": "v"}, Status: map[string]string{"s": strings.Repeat("t", 400)}}
		frame := codec.AppendRequest(nil, &in)
		var r Request
		if err := DecodeRequest(frame, &r); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if r.Version != 1 || r.PacketType != 1 || r.MessageType != 0x10 || r.RequestID != -5 ||
			string(r.Servant) != in.ServantName || string(r.Func) != in.FuncName || !bytes.Equal(r.Body, in.Buffer) {
			t.Fatalf("size %d: decoded %+v", size, r)
		}
	}
}

func TestResponseDecodesWithTarscommCodec(t *testing.T) {
	req := Request{Version: 1, MessageType: 0x10, RequestID: 70000}
	for _, tc := range []struct {
		ret  int32
		size int
		desc string
	}{{0, 0, ""}, {0, 128, ""}, {0, 70000, ""}, {0, 8 << 20, ""}, {-3, 0, "no function Foo"}, {-4, 10, strings.Repeat("d", 300)}} {
		body := bytes.Repeat([]byte{0x77}, tc.size)
		frame := AppendResponse([]byte("x"), &req, tc.ret, body, tc.desc)[1:]
		n, err := FrameLen(frame, 16<<20)
		if err != nil || n != len(frame) {
			t.Fatalf("%+v: FrameLen = %d, %v; want %d", tc, n, err, len(frame))
		}
		head := AppendResponseHead(nil, &req, tc.ret, len(body), tc.desc)
		if split := AppendResponseTail(append(head, body...), tc.desc); !bytes.Equal(split, frame) {
			t.Fatalf("%+v: head+body+tail differs from AppendResponse", tc)
		}
		var p codec.ResponsePacket
		if err := codec.DecodeResponse(frame, &p); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if p.Version != 1 || p.PacketType != 0 || p.RequestID != 70000 || p.MessageType != 0x10 || p.Ret != tc.ret ||
			!bytes.Equal(p.Buffer, body) || p.ResultDesc != tc.desc || len(p.Status) != 0 {
			t.Fatalf("%+v: decoded %+v", tc, p)
		}
	}
}

func TestDecodeRequestRejectsTruncation(t *testing.T) {
	frame := AppendRequest(nil, 9, "A.B.C", "Echo", []byte("payload"), 1000)
	for n := 4; n < len(frame); n++ {
		var r Request
		// Everything up to the body is needed; what follows it is optional.
		if err := DecodeRequest(frame[:n], &r); err == nil && !bytes.Equal(r.Body, []byte("payload")) {
			t.Fatalf("truncated to %d bytes: decoded %+v", n, r)
		}
	}
}
