package codec

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func fullRequest() RequestPacket {
	return RequestPacket{
		Version:     VersionTars,
		PacketType:  PacketNormal,
		MessageType: MessageHash | MessageTrace,
		RequestID:   -123456,
		ServantName: "Hello.Server.GreeterObj",
		FuncName:    strings.Repeat("f", 300),
		Buffer:      bytes.Repeat([]byte{0, 1, 2}, 100),
		Timeout:     70000,
		Context:     map[string]string{"a": "1", "b": strings.Repeat("2", 256), "": ""},
		Status:      map[string]string{"STATUS_DYED_KEY": "user"},
	}
}

func fullResponse() ResponsePacket {
	return ResponsePacket{
		Version:     VersionTars,
		PacketType:  PacketNormal,
		RequestID:   1 << 30,
		MessageType: MessageDyed,
		Ret:         RetNoFunc,
		Buffer:      []byte("result"),
		Status:      map[string]string{"s": "t"},
		ResultDesc:  "no such function",
		Context:     map[string]string{"c": "d", "e": "f"},
	}
}

func TestRequestPacketRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		pkt  RequestPacket
	}{
		{name: "zero", pkt: RequestPacket{}},
		{name: "full", pkt: fullRequest()},
		{name: "one-way", pkt: RequestPacket{Version: VersionTars, PacketType: PacketOneway, RequestID: 1, ServantName: "A.B.C", FuncName: "f"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := AppendRequest([]byte("prefix"), &tc.pkt)[len("prefix"):]
			got := RequestPacket{Context: map[string]string{"stale": "x"}, Buffer: []byte("stale")}
			if err := DecodeRequest(frame, &got); err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			if !reflect.DeepEqual(got, tc.pkt) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tc.pkt)
			}
		})
	}
}

func TestResponsePacketRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		pkt  ResponsePacket
	}{
		{name: "zero", pkt: ResponsePacket{}},
		{name: "full", pkt: fullResponse()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := AppendResponse(nil, &tc.pkt)
			got := ResponsePacket{ResultDesc: "stale", Context: map[string]string{"stale": "x"}}
			if err := DecodeResponse(frame, &got); err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.pkt) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tc.pkt)
			}
		})
	}
}

// ResponsePacket.Encode omits tags 8 and 9 when empty, as TarsGo does;
// RequestPacket.Encode writes every tag.
func TestPacketOptionalTags(t *testing.T) {
	rsp := AppendResponse(nil, &ResponsePacket{Version: VersionTars})
	if want := unhex(t, "0000000f10012c3c4c5c6d000c780c"); !bytes.Equal(rsp, want) {
		t.Errorf("empty response:\n got %x\nwant %x", rsp, want)
	}
	req := AppendRequest(nil, &RequestPacket{})
	if want := unhex(t, "000000141c2c3c4c560066007d000c8c980ca80c"); !bytes.Equal(req, want) {
		t.Errorf("empty request:\n got %x\nwant %x", req, want)
	}
}

// The sBuffer written as a list of int8 (as some old peers do) is accepted
// in both packets.
func TestPacketBufferAsList(t *testing.T) {
	body := []byte{1, 0, 0xff}
	writeList := func(e *Encoder, tag byte) {
		e.WriteListHead(tag, len(body))
		for _, b := range body {
			e.WriteInt8(0, int8(b))
		}
	}
	rspBytes := encode(func(e *Encoder) {
		e.WriteInt16(1, 1)
		e.WriteInt8(2, 0)
		e.WriteInt32(3, 5)
		e.WriteInt32(4, 0)
		e.WriteInt32(5, 0)
		writeList(e, 6)
		e.WriteStringMap(7, nil)
	})
	var rsp ResponsePacket
	if err := rsp.Decode(NewDecoder(rspBytes)); err != nil || !bytes.Equal(rsp.Buffer, body) {
		t.Errorf("response: got %x, %v; want %x, nil", rsp.Buffer, err, body)
	}
	reqBytes := encode(func(e *Encoder) {
		e.WriteInt16(1, 1)
		e.WriteInt8(2, 0)
		e.WriteInt32(3, 0)
		e.WriteInt32(4, 5)
		e.WriteString(5, "S")
		e.WriteString(6, "F")
		writeList(e, 7)
	})
	var req RequestPacket
	if err := req.Decode(NewDecoder(reqBytes)); err != nil || !bytes.Equal(req.Buffer, body) {
		t.Errorf("request: got %x, %v; want %x, nil", req.Buffer, err, body)
	}
}

// Tags 1 to 7 of a request are required, its 8 to 10 are not; a response
// needs tags 1 to 5 only (a TarsJava server leaves out a null sBuffer or
// status), and decodes without 6 or 7 as a nil Buffer or Status.
func TestPacketRequiredTags(t *testing.T) {
	req := fullRequest()
	rsp := fullResponse()
	for tag := byte(1); tag <= 10; tag++ {
		reqBytes := dropTag(t, AppendRequest(nil, &req)[HeaderLen:], tag)
		var q RequestPacket
		err := q.Decode(NewDecoder(reqBytes))
		if wantErr := tag <= 7; wantErr != errors.Is(err, ErrRequired) || (!wantErr && err != nil) {
			t.Errorf("request without tag %d: got %v, want ErrRequired %v", tag, err, wantErr)
		}
		if tag > 9 {
			continue
		}
		rspBytes := dropTag(t, AppendResponse(nil, &rsp)[HeaderLen:], tag)
		var p ResponsePacket
		err = p.Decode(NewDecoder(rspBytes))
		if wantErr := tag <= 5; wantErr != errors.Is(err, ErrRequired) || (!wantErr && err != nil) {
			t.Errorf("response without tag %d: got %v, want ErrRequired %v", tag, err, wantErr)
		}
		if err == nil && (tag == 6 && p.Buffer != nil || tag == 7 && p.Status != nil || p.RequestID != rsp.RequestID) {
			t.Errorf("response without tag %d: decoded Buffer %x, Status %v, request id %d", tag, p.Buffer, p.Status, p.RequestID)
		}
	}
}

// dropTag returns the top-level fields of b without the one at tag.
func dropTag(t *testing.T, b []byte, tag byte) []byte {
	t.Helper()
	var out []byte
	d := NewDecoder(b)
	for d.Len() > 0 {
		start := d.Offset()
		got, _, err := d.PeekHead()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SkipField(); err != nil {
			t.Fatal(err)
		}
		if got != tag {
			out = append(out, b[start:d.Offset()]...)
		}
	}
	return out
}

// Fields with tags the packets do not know are skipped or left unread.
func TestPacketUnknownTags(t *testing.T) {
	b := encode(func(e *Encoder) {
		e.WriteInt16(1, 1)
		e.WriteInt8(2, 0)
		e.WriteInt32(3, 9)
		e.WriteInt32(4, 0)
		e.WriteInt32(5, 0)
		e.WriteBytes(6, []byte("x"))
		e.WriteStringMap(7, nil)
		e.WriteStructBegin(8) // not the string TarsGo writes here
		e.WriteStructEnd()
	})
	var p ResponsePacket
	if err := p.Decode(NewDecoder(b)); !errors.Is(err, ErrMalformed) {
		t.Errorf("tag 8 of the wrong type: got %v, want ErrMalformed", err)
	}
	b = append(b[:len(b)-2], encode(func(e *Encoder) {
		e.WriteStringMap(9, map[string]string{"k": "v"})
		e.WriteStructBegin(10)
		e.WriteInt32(0, 1)
		e.WriteStructEnd()
		e.WriteString(100, "future")
	})...)
	if err := p.Decode(NewDecoder(b)); err != nil || p.RequestID != 9 || p.Context["k"] != "v" {
		t.Errorf("with future tags: got %+v, %v", p, err)
	}
}

// Every proper prefix of a valid packet fails to decode, without panicking.
func TestPacketTruncated(t *testing.T) {
	req := fullRequest()
	rsp := fullResponse()
	tests := []struct {
		name   string
		frame  []byte
		decode func(body []byte) error
	}{
		{name: "request", frame: AppendRequest(nil, &req), decode: func(b []byte) error {
			var p RequestPacket
			return p.Decode(NewDecoder(b))
		}},
		{name: "response", frame: AppendResponse(nil, &rsp), decode: func(b []byte) error {
			var p ResponsePacket
			return p.Decode(NewDecoder(b))
		}},
		{name: "request vector", frame: unhex(t, vecReq2Ctx), decode: func(b []byte) error {
			var p RequestPacket
			return p.Decode(NewDecoder(b))
		}},
		{name: "response vector", frame: unhex(t, vecRspNoFunc), decode: func(b []byte) error {
			var p ResponsePacket
			return p.Decode(NewDecoder(b))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.frame[HeaderLen:]
			if err := tc.decode(body); err != nil {
				t.Fatalf("whole packet: %v", err)
			}
			// A packet cut before or inside its required fields (a request's
			// 1..7, a response's 1..5), or inside any field, fails; one cut
			// between optional fields is a valid shorter packet.
			lastRequired := byte(7)
			if strings.HasPrefix(tc.name, "response") {
				lastRequired = 5
			}
			minLen, boundaries := fieldBoundaries(t, body, lastRequired)
			for i := range len(body) {
				err := tc.decode(body[:i])
				if wantOK := i >= minLen && boundaries[i]; wantOK != (err == nil) {
					t.Errorf("prefix of %d of %d bytes: got error %v, want error %v", i, len(body), err, !wantOK)
				}
			}
			for i := range len(tc.frame) {
				var err error
				if strings.HasPrefix(tc.name, "request") {
					err = DecodeRequest(tc.frame[:i], new(RequestPacket))
				} else {
					err = DecodeResponse(tc.frame[:i], new(ResponsePacket))
				}
				if err == nil {
					t.Errorf("frame prefix of %d of %d bytes: got nil error", i, len(tc.frame))
				}
			}
		})
	}
}

// fieldBoundaries returns the offset just past tag lastRequired, where the
// optional fields start, and the offsets at which a top-level field starts.
func fieldBoundaries(t *testing.T, body []byte, lastRequired byte) (minLen int, starts map[int]bool) {
	t.Helper()
	starts = map[int]bool{}
	d := NewDecoder(body)
	for d.Len() > 0 {
		starts[d.Offset()] = true
		tag, _, err := d.PeekHead()
		if err != nil {
			t.Fatal(err)
		}
		if tag <= lastRequired {
			minLen = d.Offset() + 1
		}
		if err := d.SkipField(); err != nil {
			t.Fatal(err)
		}
		if tag <= lastRequired {
			minLen = d.Offset()
		}
	}
	return minLen, starts
}

func TestDecodeResponseAllocs(t *testing.T) {
	tests := []struct {
		name       string
		hex        string
		wantAllocs float64
	}{
		{name: "success", hex: vecRsp1, wantAllocs: 0},
		{name: "tars_ping", hex: vecRspPing, wantAllocs: 0},
		{name: "error with description", hex: vecRspNoFunc, wantAllocs: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := unhex(t, tc.hex)
			var p ResponsePacket
			allocs := testing.AllocsPerRun(100, func() {
				if err := DecodeResponse(frame, &p); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != tc.wantAllocs {
				t.Errorf("got %v allocs, want %v", allocs, tc.wantAllocs)
			}
		})
	}
}

func TestEncodeRequestAllocs(t *testing.T) {
	p := fullRequest()
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendRequest(buf[:0], &p)
	})
	if allocs != 0 {
		t.Errorf("AppendRequest into a large enough buffer: got %v allocs, want 0", allocs)
	}
}

func BenchmarkEncodeRequest(b *testing.B) {
	p := RequestPacket{
		Version:     VersionTars,
		RequestID:   1,
		ServantName: "Anchor.EchoServer.EchoPbObj",
		FuncName:    "Echo",
		Buffer:      mustUnhex(echoPbBodyHx),
		Timeout:     3000,
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.RequestID = int32(i)
		buf = AppendRequest(buf[:0], &p)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeResponse(b *testing.B) {
	frame := mustUnhex(vecRsp1)
	var p ResponsePacket
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := DecodeResponse(frame, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRequest decodes the request vector with a one-entry context of one-byte strings,
// and a traced request: a W3C traceparent in its context, TARS's trace key in its status.
func BenchmarkDecodeRequest(b *testing.B) {
	traced := RequestPacket{
		Version: VersionTars, RequestID: 1, ServantName: "Anchor.EchoServer.EchoPbObj", FuncName: "Echo",
		Buffer: mustUnhex(echoPbBodyHx), Timeout: 3000, MessageType: MessageTrace,
		Context: map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		Status:  map[string]string{"STATUS_TRACE_KEY": "0-4bf92f3577b34da6a3ce929d0e0e4736|00f067aa0ba902b7"},
	}
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"vector", mustUnhex(vecReq2Ctx)},
		{"traced", AppendRequest(nil, &traced)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var p RequestPacket
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.frame)))
			for b.Loop() {
				if err := DecodeRequest(tc.frame, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	p := ResponsePacket{Version: VersionTars, RequestID: 1, Buffer: mustUnhex(echoPbBodyHx)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], &p)
	}
	b.SetBytes(int64(len(buf)))
}
