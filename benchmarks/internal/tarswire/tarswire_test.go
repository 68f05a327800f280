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
