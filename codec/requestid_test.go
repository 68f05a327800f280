package codec

import (
	"bytes"
	"math"
	"testing"
)

// A frame encoded with RequestIDUnassigned takes any id in place and decodes to the same packet
// with that id; the bytes around the id do not move.
func TestSetRequestID(t *testing.T) {
	for _, mt := range []int32{0, 1, 0x80, math.MaxInt32} {
		for _, pt := range []int8{PacketNormal, PacketOneway} {
			p := RequestPacket{Version: VersionTars, PacketType: pt, MessageType: mt, RequestID: RequestIDUnassigned,
				ServantName: "A.B.C", FuncName: "f", Buffer: []byte("body"), Timeout: 3000, Context: map[string]string{"k": "v"}}
			frame := AppendRequest(nil, &p)
			before := bytes.Clone(frame)
			for _, id := range []int32{1, 7, 300, 70000, math.MaxInt32, -5} {
				if !SetRequestID(frame, id) {
					t.Fatalf("mt %d pt %d: SetRequestID(%d) = false", mt, pt, id)
				}
				if got, ok := RequestIDOf(frame); !ok || got != id {
					t.Fatalf("RequestIDOf = %d, %v; want %d, true", got, ok, id)
				}
				var q RequestPacket
				if err := DecodeRequest(frame, &q); err != nil {
					t.Fatalf("decode after SetRequestID(%d): %v", id, err)
				}
				want := p
				want.RequestID = id
				if q.RequestID != id || q.ServantName != want.ServantName || q.MessageType != mt || q.PacketType != pt || !bytes.Equal(q.Buffer, want.Buffer) || q.Timeout != want.Timeout || q.Context["k"] != "v" {
					t.Fatalf("decoded %+v, want %+v", q, want)
				}
				if len(frame) != len(before) {
					t.Fatalf("frame length changed: %d -> %d", len(before), len(frame))
				}
			}
		}
	}
}

// An id encoded narrower than 4 bytes, or a frame that is not a request, is refused untouched.
func TestSetRequestIDRefuses(t *testing.T) {
	for _, id := range []int32{0, 1, 300, -1} {
		frame := AppendRequest(nil, &RequestPacket{Version: VersionTars, RequestID: id, ServantName: "S", FuncName: "f"})
		before := bytes.Clone(frame)
		if SetRequestID(frame, 99999) {
			t.Errorf("id %d encoded narrow: SetRequestID = true", id)
		}
		if !bytes.Equal(frame, before) {
			t.Errorf("id %d: a refused SetRequestID changed the frame", id)
		}
	}
	rsp := AppendResponse(nil, &ResponsePacket{Version: VersionTars, RequestID: RequestIDUnassigned})
	if SetRequestID(rsp, 5) {
		t.Error("a response frame took a request id")
	}
	for n := range 12 {
		if SetRequestID(make([]byte, n), 5) {
			t.Errorf("%d zero bytes took a request id", n)
		}
	}
	full := AppendRequest(nil, &RequestPacket{Version: VersionTars, RequestID: RequestIDUnassigned, ServantName: "S", FuncName: "f"})
	for n := range len(full) {
		at := requestIDAt(full[:n])
		if at >= 0 && at+4 > n {
			t.Fatalf("truncated to %d bytes: id offset %d runs past the end", n, at)
		}
	}
}

// BenchmarkSetRequestID is what the loop pays per call to give it its id.
func BenchmarkSetRequestID(b *testing.B) {
	frame := AppendRequest(nil, &RequestPacket{Version: VersionTars, MessageType: 0x80, RequestID: RequestIDUnassigned, ServantName: "Hello.Server.GreeterObj", FuncName: "SayHello", Buffer: make([]byte, 128), Timeout: 3000})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if !SetRequestID(frame, int32(i)) {
			b.Fatal("refused")
		}
	}
}
