package codec

import (
	"strings"
	"testing"
)

// TestSetRequestTimeout: the timeout written over a request frame is what the frame decodes to,
// every other field unchanged, for each width the first timeout may have been encoded in and
// for bodies whose size takes each width; a value that does not fit, or a frame that is not a
// request, is refused and left alone.
func TestSetRequestTimeout(t *testing.T) {
	for _, first := range []int32{100, 3000, 60000} { // int8, int16, int32
		for _, size := range []int{0, 10, 300, 70000} {
			req := RequestPacket{Version: VersionTars, RequestID: RequestIDUnassigned, ServantName: "A.B.Obj",
				FuncName: strings.Repeat("f", 300), Buffer: make([]byte, size), Timeout: first,
				Context: map[string]string{"k": "v"}}
			frame := AppendRequest(nil, &req)
			for _, ms := range []int32{1, first / 2, first} {
				if !SetRequestTimeout(frame, ms) {
					t.Fatalf("timeout %d, body %d: SetRequestTimeout(%d) refused", first, size, ms)
				}
				var got RequestPacket
				if err := DecodeRequest(frame, &got); err != nil {
					t.Fatal(err)
				}
				if got.Timeout != ms || got.FuncName != req.FuncName || len(got.Buffer) != size || got.Context["k"] != "v" {
					t.Fatalf("timeout %d, body %d: after SetRequestTimeout(%d) the frame decodes to timeout %d, func %d bytes, "+
						"body %d bytes, context %v", first, size, ms, got.Timeout, len(got.FuncName), len(got.Buffer), got.Context)
				}
			}
		}
	}
	frame := AppendRequest(nil, &RequestPacket{Version: VersionTars, RequestID: RequestIDUnassigned, Timeout: 100})
	before := string(frame)
	if SetRequestTimeout(frame, 1000) || string(frame) != before {
		t.Fatal("a timeout wider than the frame's field was written")
	}
	zero := AppendRequest(nil, &RequestPacket{Version: VersionTars, RequestID: RequestIDUnassigned})
	if SetRequestTimeout(zero, 5) {
		t.Fatal("a timeout was written over a zero-width field")
	}
	resp := AppendResponse(nil, &ResponsePacket{Version: VersionTars, RequestID: 5})
	if SetRequestTimeout(resp, 5) {
		t.Fatal("a response frame was taken for a request")
	}
	if SetRequestTimeout(frame[:len(frame)-20], 5) {
		t.Fatal("a frame cut short was written")
	}
}
