package server_test

import (
	"context"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestTraceKeyRelayed: TarsCpp's server carries a traced request's trace on into every call
// its handler makes, with no plugin: ServantHandle::processTrace reads iMessageType bit 0x100
// (TARSMESSAGETYPETRACE) and status STATUS_TRACE_KEY into the thread's TraceContext, and
// ServantProxy::checkTrace sets the bit and STATUS_TRACE_KEY = "<traceID>|<spanID>" (the same
// traceID) on each call, as checkDye does for the dyeing key. Here a traced and dyed request
// reaches server A (no interceptor); A's handler calls B with its ctx. The dyeing key reaches B
// (control); the trace must too: the bit, and a trace key with the request's traceID. Before,
// B got the dyeing key only (package tracekey now carries the trace).
func TestTraceKeyRelayed(t *testing.T) {
	const (
		front   = "Test.Trace.FrontObj"
		back    = "Test.Trace.BackObj"
		traceID = "f.2-ee824ad0eb4dacf56b29d230a229c584"
	)
	type seenReq struct {
		mt int32
		st map[string]string
	}
	seen := make(chan seenReq, 1)
	b := server.New(server.WithLogger(zaptest.NewLogger(t).Named("back")))
	if err := b.Handle(back, "Rec", func(_ context.Context, cur *server.Current, _, rsp []byte) ([]byte, error) {
		select {
		case seen <- seenReq{cur.MessageType, maps.Clone(cur.Status)}:
		default:
		}
		return rsp, nil
	}); err != nil {
		t.Fatal(err)
	}
	bAddr := startCookieServer(t, b)

	comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = comm.Close() })
	_, port, _ := net.SplitHostPort(bAddr)
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(back+"@tcp -h 127.0.0.1 -p "+port+" -t 60000", &sp); err != nil {
		t.Fatal(err)
	}

	a := server.New(server.WithLogger(zaptest.NewLogger(t).Named("front")))
	if err := a.Handle(front, "Call", func(ctx context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		if _, err := sp.InvokeRaw(ctx, "Rec", nil); err != nil {
			return nil, err
		}
		return rsp, nil
	}); err != nil {
		t.Fatal(err)
	}
	aAddr := startCookieServer(t, a)

	c, err := net.DialTimeout("tcp", aAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(codec.AppendRequest(nil, &codec.RequestPacket{
		Version: codec.VersionTars, RequestID: 1, ServantName: front, FuncName: "Call", Timeout: 5000,
		MessageType: codec.MessageDyed | codec.MessageTrace,
		Status: map[string]string{"STATUS_DYED_KEY": "dye-7",
			"STATUS_TRACE_KEY": traceID + "|030019ac000010796162bc5900000021"},
	})); err != nil {
		t.Fatal(err)
	}
	f, err := codec.NewFrameReader(c, 0).Next()
	if err != nil {
		t.Fatalf("no reply from the front server: %v", err)
	}
	var rsp codec.ResponsePacket
	if err := codec.DecodeResponse(f, &rsp); err != nil || rsp.Ret != codec.RetOK {
		t.Fatalf("front reply: ret %d (%q), err %v; want 0", rsp.Ret, rsp.ResultDesc, err)
	}
	var got seenReq
	select {
	case got = <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("the back server saw no call")
	}
	if got.st["STATUS_DYED_KEY"] != "dye-7" {
		t.Fatalf("control: the dyeing key did not reach the back server: status %v", got.st)
	}
	key := got.st["STATUS_TRACE_KEY"]
	if got.mt&codec.MessageTrace == 0 || !strings.HasPrefix(key, traceID+"|") {
		t.Errorf("the back server got message type %#x and STATUS_TRACE_KEY %q (status %v); want bit %#x and a key "+
			"\"%s|<spanID>\": the trace of the request the front handler served was dropped, where TarsCpp's "+
			"processTrace/checkTrace carry it into the handler's calls", got.mt, key, got.st, codec.MessageTrace, traceID)
	}
}
