package server

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// goexitServer starts a server whose S.Exit handler ends its goroutine with runtime.Goexit (as
// t.FailNow in a test's handler does) and whose S.Echo echoes.
func goexitServer(t *testing.T, opts ...Option) string {
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "S", "Exit", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			runtime.Goexit()
			return nil, nil
		})
		mustHandle(t, s, "S", "Echo", echo)
	}, opts...)
	return addr
}

// exitOn calls S.Echo on a and b, then S.Exit on a, which must be answered RetUnknown.
func exitOn(t *testing.T, a, b *client) {
	t.Helper()
	if rsp := a.call(request(1, "S", "Echo", []byte("a"))); rsp.Ret != codec.RetOK {
		t.Fatalf("echo on a: ret = %d", rsp.Ret)
	}
	if rsp := b.call(request(1, "S", "Echo", []byte("b"))); rsp.Ret != codec.RetOK {
		t.Fatalf("echo on b: ret = %d", rsp.Ret)
	}
	rsp := a.call(request(2, "S", "Exit", []byte("x")))
	if rsp.Ret != codec.RetUnknown || rsp.ResultDesc != goexitDesc {
		t.Fatalf("Goexit call: ret = %d (%q), want RetUnknown (%q)", rsp.Ret, rsp.ResultDesc, goexitDesc)
	}
}

// TestHandlerGoexitWorkers: with workers, a handler that ends its goroutine is answered
// RetUnknown like a panicking one, a new worker takes the place of the one it ended, and the
// server goes on serving (on the same connection) and stops. It used to leave the request
// unanswered, lose the worker (with as many Goexits as workers, nothing was served any more),
// and Stop waited for the request until its ctx ended.
func TestHandlerGoexitWorkers(t *testing.T) {
	c := dial(t, goexitServer(t, WithWorkers(2)))
	for i := range int32(4) { // twice as many as there are workers
		rsp := c.call(request(2*i+1, "S", "Exit", []byte("x")))
		if rsp.Ret != codec.RetUnknown || rsp.ResultDesc != goexitDesc {
			t.Fatalf("Goexit call %d: ret = %d (%q), want RetUnknown (%q)", i, rsp.Ret, rsp.ResultDesc, goexitDesc)
		}
		rsp = c.call(request(2*i+2, "S", "Echo", []byte("hi")))
		if rsp.Ret != codec.RetOK || string(rsp.Buffer) != "hi" {
			t.Fatalf("echo after Goexit %d: ret = %d body %q", i, rsp.Ret, rsp.Buffer)
		}
	}
}

// TestHandlerGoexitInline: inline, a handler that ends its goroutine ends the event loop's,
// which cannot run again. The request is still answered RetUnknown, the loop's connections are
// shut down (another connection either goes on being served, on another loop, or is closed:
// none waits for a reply that never comes), and Stop returns (startServer's cleanup checks it).
// The request used to go unanswered, the loop's connections hung, and Stop waited for the lost
// loop until its ctx ended.
func TestHandlerGoexitInline(t *testing.T) {
	addr := goexitServer(t, WithNumEventLoop(2))
	a, b := dial(t, addr), dial(t, addr)
	exitOn(t, a, b)
	a.expectClosed()
	b.write(codec.AppendRequest(nil, request(2, "S", "Echo", []byte("b2"))))
	f, err := b.readFrame(testTimeout)
	switch {
	case err == nil:
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil || rsp.RequestID != 2 || string(rsp.Buffer) != "b2" {
			t.Fatalf("the other connection's echo: %+v, %v", rsp, err)
		}
		t.Log("the other connection is on the other loop: still served")
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err):
		t.Log("the other connection was on the lost loop: shut down")
	default:
		t.Fatalf("the other connection: %v, want a reply or the connection closed", err)
	}
}

// TestHandlerGoexitUDP: an inline udp handler that ends its goroutine (the loop's) is answered
// RetUnknown, and Stop returns (startUDP's cleanup checks it).
func TestHandlerGoexitUDP(t *testing.T) {
	_, c := startUDP(t, func(s *Server) {
		mustHandle(t, s, "S", "Exit", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			runtime.Goexit()
			return nil, nil
		})
	})
	rsp := callUDP(t, c, request(1, "S", "Exit", []byte("x")))
	if rsp.Ret != codec.RetUnknown || rsp.ResultDesc != goexitDesc {
		t.Fatalf("Goexit call: ret = %d (%q), want RetUnknown (%q)", rsp.Ret, rsp.ResultDesc, goexitDesc)
	}
}
