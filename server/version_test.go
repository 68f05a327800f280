package server

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestOtherVersionsRefused: the server serves TARS requests (iVersion 1) only, and answers the
// others it cannot read without running a handler: a TUP request (3) with a TUP reply (a
// RequestPacket, as TarsCpp's servers answer TUP, its code and description in its status), a
// JSON (5), XML (4) or unknown one with a TARS reply; each with -1 (the server could not
// decode the request) and a description naming the version. A TARS request on the same
// connection is served after them. Before, each was handed to the handler as if it were TARS,
// and answered as TARS: a TUP client could not read the reply, and a handler decoded JSON or a
// UniAttribute as TARS fields.
func TestOtherVersionsRefused(t *testing.T) {
	leakCheck(t)
	var ran atomic.Int32
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Echo", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			ran.Add(1)
			return append(rsp, req...), nil
		})
	})
	c := dial(t, addr)
	for i, v := range []int16{codec.VersionJSON, codec.VersionXML, 0, 7, codec.VersionTup} {
		r := request(int32(i+1), "App.S.Obj", "Echo", []byte(`{"a":1}`))
		r.Version = v
		c.write(codec.AppendRequest(nil, r))
		f, err := c.readFrame(testTimeout)
		if err != nil {
			t.Fatalf("iVersion %d: no reply: %v", v, err)
		}
		if v == codec.VersionTup {
			var got codec.RequestPacket
			if err := codec.DecodeRequest(f, &got); err != nil {
				t.Fatalf("TUP request: the reply is no RequestPacket (TUP's reply shape): %v", err)
			}
			code, desc := got.Status["STATUS_RESULT_CODE"], got.Status["STATUS_RESULT_DESC"]
			if got.Version != codec.VersionTup || got.RequestID != r.RequestID || got.ServantName != "App.S.Obj" ||
				got.FuncName != "Echo" || code != "-1" || !strings.Contains(desc, "3") {
				t.Fatalf("TUP request: reply version %d, id %d, %s.%s, code %q, desc %q; want version 3, id %d, App.S.Obj.Echo, "+
					"code -1 and a description naming the version", got.Version, got.RequestID, got.ServantName, got.FuncName,
					code, desc, r.RequestID)
			}
			continue
		}
		var got codec.ResponsePacket
		if err := codec.DecodeResponse(f, &got); err != nil {
			t.Fatalf("iVersion %d: %v", v, err)
		}
		if got.Ret != codec.RetServerDecode || got.RequestID != r.RequestID || got.Version != v ||
			!strings.Contains(got.ResultDesc, "version") {
			t.Fatalf("iVersion %d: reply ret %d, id %d, version %d, desc %q; want ret -1, id %d, the request's version, "+
				"and a description naming it", v, got.Ret, got.RequestID, got.Version, got.ResultDesc, r.RequestID)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for requests it cannot read", n)
	}
	if rsp := c.call(request(9, "App.S.Obj", "Echo", []byte("x"))); rsp.Ret != codec.RetOK || string(rsp.Buffer) != "x" {
		t.Fatalf("a TARS request after them: ret %d %q, body %q; want it served", rsp.Ret, rsp.ResultDesc, rsp.Buffer)
	}
}
