package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// oversizedRequestHead returns the first bytes of a well-formed request frame of length bytes
// (id, servant, fn): tags 1 to 6, the head of a simple-list body that ends 10 bytes before the
// frame's end (the tail's iTimeout, context and status take 7), and body bytes up to n in all.
func oversizedRequestHead(id int32, servant, fn string, length uint32, n int) []byte {
	f := codec.AppendRequest(nil, request(id, servant, fn, nil))
	at := bytes.LastIndex(f, []byte(fn)) + len(fn) // tag 7 follows the function's name
	b := append(f[:at:at], 0x7d, 0x00, 0x02, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b, length)
	binary.BigEndian.PutUint32(b[len(b)-4:], length-uint32(len(b))-10)
	for len(b) < n {
		b = append(b, 'x')
	}
	return b
}

// TestOversizeRequestLengthLooksForeign: a well-formed request above WithMaxPacketSize
// (and below 1 GiB) whose length bytes happen to read as a TLS record's start (369,295,616
// bytes) or as text (808,464,432) is answered -1 like any other oversized request. Before, the
// connection was closed (inbound.Foreign was asked before the head; found by a review).
func TestOversizeRequestLengthLooksForeign(t *testing.T) {
	for _, length := range []uint32{0x16030100, 0x30303030} {
		t.Run(fmt.Sprintf("%#x", length), func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) }, WithMaxPacketSize(1<<20))
			c := dial(t, addr)
			if rsp := c.call(request(1, pbServant, "Echo", []byte("one"))); rsp.Ret != codec.RetOK {
				t.Fatalf("request 1: ret %d", rsp.Ret)
			}
			c.write(oversizedRequestHead(2, pbServant, "Echo", length, 600)) // the rest never comes
			f, err := c.readFrame(testTimeout)
			if err != nil {
				t.Fatalf("a well-formed request of %d bytes above max-packet-size: read %v; want it answered -1", length, err)
			}
			rsp := new(codec.ResponsePacket)
			if err := codec.DecodeResponse(f, rsp); err != nil || rsp.RequestID != 2 || rsp.Ret != codec.RetServerDecode {
				t.Fatalf("request 2: id %d ret %d (%v); want id 2 answered -1", rsp.RequestID, rsp.Ret, err)
			}
		})
	}
}

// TestOversizeLongNames: a request above WithMaxPacketSize whose servant and function
// names are long (300 and 250 bytes: TARS allows names of any length, a string4) is answered
// -1 and skipped, and the request after it is answered. Before, DecodeRequestHead required both
// names whole in the first inbound.HeadLen bytes, then 512, and the connection closed (found by
// a review; HeadLen is 4096 now).
func TestOversizeLongNames(t *testing.T) {
	const limit = 4096
	servant := "App.Server." + strings.Repeat("S", 289) + "Obj"
	fn := strings.Repeat("f", 250)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Echo", echo)
		mustHandle(t, s, servant, fn, echo)
	}, WithMaxPacketSize(limit))
	c := dial(t, addr)
	if rsp := c.call(request(1, servant, fn, []byte("small"))); rsp.Ret != codec.RetOK || string(rsp.Buffer) != "small" {
		t.Fatalf("a small request with the long names: ret %d body %q", rsp.Ret, rsp.Buffer)
	}
	big := codec.AppendRequest(nil, request(2, servant, fn, bytes.Repeat([]byte("x"), 3*limit)))
	c.write(append(big, codec.AppendRequest(nil, request(3, pbServant, "Echo", []byte("three")))...))
	f, err := c.readFrame(testTimeout)
	if err != nil {
		t.Fatalf("an oversized request with a %d-byte servant and a %d-byte function name: read %v; want it answered -1",
			len(servant), len(fn), err)
	}
	rsp := new(codec.ResponsePacket)
	if err := codec.DecodeResponse(f, rsp); err != nil || rsp.RequestID != 2 || rsp.Ret != codec.RetServerDecode {
		t.Fatalf("request 2: id %d ret %d (%v); want id 2 answered -1", rsp.RequestID, rsp.Ret, err)
	}
	if rsp := c.recv(); rsp.RequestID != 3 || rsp.Ret != codec.RetOK {
		t.Fatalf("request 3: id %d ret %d", rsp.RequestID, rsp.Ret)
	}
}

// TestOversizeTupAndJSON: oversized TUP (versions 2 and 3) and JSON (5) requests are
// answered -1 in their form (TUP: request-shaped) and the connection goes on.
func TestOversizeTupAndJSON(t *testing.T) {
	const limit = 4096
	_, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) }, WithMaxPacketSize(limit))
	c := dial(t, addr)
	for i, v := range []int16{codec.VersionTupComplex, codec.VersionTup, codec.VersionJSON} {
		id := int32(10 + i)
		req := request(id, pbServant, "Echo", bytes.Repeat([]byte("x"), 3*limit))
		req.Version = v
		req.Context = map[string]string{"k": "v"}
		c.write(codec.AppendRequest(nil, req))
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if v == codec.VersionJSON {
			rsp := new(codec.ResponsePacket)
			if err := codec.DecodeResponse(f, rsp); err != nil || rsp.RequestID != id || rsp.Ret != codec.RetServerDecode {
				t.Fatalf("version %d: id %d ret %d (%v)", v, rsp.RequestID, rsp.Ret, err)
			}
			continue
		}
		var p codec.RequestPacket
		if err := codec.DecodeRequest(f, &p); err != nil || p.RequestID != id || p.Status["STATUS_RESULT_CODE"] != "-1" {
			t.Fatalf("version %d: id %d status %v (%v)", v, p.RequestID, p.Status, err)
		}
	}
	if rsp := c.call(request(20, pbServant, "Echo", []byte("after"))); rsp.Ret != codec.RetOK {
		t.Fatalf("after: ret %d", rsp.Ret)
	}
}
