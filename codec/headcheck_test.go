package codec

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestHeadsCheckTheFrameLength: DecodeRequestHead and DecodeResponseHead, given the first bytes
// of a frame too long to read whole, accept the frame's true length, and a length up to
// MaxTrailer beyond where the announced body ends, and refuse one the body does not fit: a length
// prefix damaged in flight (the soak's garbage fault turned a reply's into 336,289,144) made a
// client skip that many bytes of the replies that followed, which no call waited for.
func TestHeadsCheckTheFrameLength(t *testing.T) {
	body := bytes.Repeat([]byte("b"), 3<<20)
	status := map[string]string{"STATUS_RESULT_CODE": "0", "k": strings.Repeat("v", 300)}
	req := AppendRequest(nil, &RequestPacket{Version: 1, RequestID: 7, ServantName: "A.B.CObj", FuncName: "echo", Buffer: body, Timeout: 3000, Status: status})
	rsp := AppendResponse(nil, &ResponsePacket{Version: 1, RequestID: 7, Buffer: body, ResultDesc: "ok", Status: status})
	for _, tc := range []struct {
		name   string
		frame  []byte
		decode func(head []byte, length int) (int32, error)
	}{
		{"request", req, func(head []byte, length int) (int32, error) {
			var p RequestPacket
			_, err := DecodeRequestHead(head, length, &p)
			if err == nil && (p.ServantName != "A.B.CObj" || p.FuncName != "echo") {
				t.Errorf("request head: servant %q, function %q", p.ServantName, p.FuncName)
			}
			return p.RequestID, err
		}},
		{"response", rsp, func(head []byte, length int) (int32, error) {
			var p ResponsePacket
			_, err := DecodeResponseHead(head, length, &p)
			return p.RequestID, err
		}},
	} {
		head := tc.frame[:512]
		n := len(tc.frame)
		bodyEnd := bytes.Index(tc.frame, body) + len(body)
		for _, length := range []int{n, bodyEnd, bodyEnd + MaxTrailer} {
			if id, err := tc.decode(head, length); err != nil || id != 7 {
				t.Errorf("%s of %d bytes read as %d: id %d, %v; want 7, nil", tc.name, n, length, id, err)
			}
		}
		for _, length := range []int{bodyEnd - 1, bodyEnd + MaxTrailer + 1, 336289144, 11 << 20, 1 << 30} {
			if _, err := tc.decode(head, length); err == nil || !strings.Contains(err.Error(), "does not hold the body") {
				t.Errorf("%s of %d bytes read as %d: %v; want an error saying the body does not fit", tc.name, n, length, err)
			}
		}
	}
	// A request whose names do not fit in the head cannot be checked: refused.
	long := AppendRequest(nil, &RequestPacket{Version: 1, RequestID: 8, ServantName: strings.Repeat("S", 600), FuncName: "f", Buffer: body})
	var p RequestPacket
	if _, err := DecodeRequestHead(long[:512], len(long), &p); err == nil {
		t.Error("a request head whose servant name runs past the head's 512 bytes was accepted")
	}
	// A body written as a list of int8 (each element 1 or 2 bytes) fits between those bounds.
	e := &Encoder{}
	e.Buf = append(e.Buf, 0, 0, 0, 0)
	e.WriteInt16(1, 1)
	e.WriteInt8(2, 0)
	e.WriteInt32(3, 9)
	e.WriteInt32(4, 0)
	e.WriteInt32(5, 0)
	e.Buf = append(e.Buf, 6<<4|TypeList)
	e.WriteInt32(0, 100000)
	for range 100000 {
		e.WriteInt8(0, 1) // a head and a byte each
	}
	listed := e.Buf
	var r ResponsePacket
	if _, err := DecodeResponseHead(listed[:512], len(listed), &r); err != nil || r.RequestID != 9 {
		t.Errorf("a response whose body is a list of int8: id %d, %v", r.RequestID, err)
	}
	if _, err := DecodeResponseHead(listed[:512], 2*len(listed)+MaxTrailer, &r); err == nil {
		t.Error("a list of int8 read as twice its length and more was accepted")
	}
}

// TestHeadTruncatedOrNot: a head cut anywhere before its body's size reads as ErrTruncated (more
// bytes may decode), while bytes that no more bytes can make a head do not: the Assembler waits
// for the first and closes on the second at once.
func TestHeadTruncatedOrNot(t *testing.T) {
	rsp := AppendResponse(nil, &ResponsePacket{Version: 1, RequestID: 7, Buffer: bytes.Repeat([]byte("b"), 3<<20)})
	req := AppendRequest(nil, &RequestPacket{Version: 1, RequestID: 7, ServantName: "A.B.CObj", FuncName: "echo", Buffer: bytes.Repeat([]byte("b"), 3<<20)})
	var r ResponsePacket
	var q RequestPacket
	for n := HeaderLen; n < 64; n++ {
		if _, err := DecodeResponseHead(rsp[:n], len(rsp), &r); err != nil && !errors.Is(err, ErrTruncated) {
			t.Errorf("a response head cut at %d bytes: %v; want ErrTruncated", n, err)
		}
		if _, err := DecodeRequestHead(req[:n], len(req), &q); err != nil && !errors.Is(err, ErrTruncated) {
			t.Errorf("a request head cut at %d bytes: %v; want ErrTruncated", n, err)
		}
	}
	for _, garbage := range [][]byte{
		{0, 0, 0, 0, 0xa0, 1, 2, 3}, // tag 10 where tag 1 must be
		{0, 0, 0, 0, 0x1d, 0, 0},    // iVersion as a simple list
		[]byte("\x00\x00\x00\x00text that is no head"),
	} {
		if _, err := DecodeResponseHead(garbage, 1<<24, &r); err == nil || errors.Is(err, ErrTruncated) {
			t.Errorf("%q as a response head: %v; want an error that is not ErrTruncated", garbage, err)
		}
	}
}
