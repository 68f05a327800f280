package server_test

import (
	"context"
	"maps"
	"net"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// startCookieServer starts s on 127.0.0.1:0 and stops it when the test ends.
func startCookieServer(t *testing.T, s *server.Server) string {
	t.Helper()
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return addr.String()
}

// TestCookiePropagated: TarsCpp's ServantHandle::processCookie takes every
// request status key not prefixed "STATUS_" as a cookie and holds it (CookieOp) for the whole
// dispatch, and ServantProxy::checkCookie copies it into the status of every call the handler
// makes: a cookie travels down a call chain the way the dyeing key does. Here a request to A
// carries the cookie uid=42 and the dyeing key; A's handler calls B with its ctx: both reach B.
// Before, the dyeing key reached B and the cookie did not (nothing carried cookies).
func TestCookiePropagated(t *testing.T) {
	const (
		front = "Cookie.Front.FrontObj"
		back  = "Cookie.Back.BackObj"
	)
	seen := make(chan map[string]string, 1)
	b := server.New(server.WithLogger(zaptest.NewLogger(t).Named("back")))
	if err := b.Handle(back, "Rec", func(_ context.Context, cur *server.Current, _, rsp []byte) ([]byte, error) {
		select {
		case seen <- maps.Clone(cur.Status):
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

	a := server.New(server.WithLogger(zaptest.NewLogger(t).Named("front")), server.WithWorkers(2))
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
		MessageType: codec.MessageDyed,
		Status:      map[string]string{"STATUS_DYED_KEY": "dye-7", "uid": "42"},
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
	var st map[string]string
	select {
	case st = <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("the back server saw no call")
	}
	if st["STATUS_DYED_KEY"] != "dye-7" {
		t.Errorf("control: the dyeing key did not reach the back server: status %v", st)
	}
	if st["uid"] != "42" {
		t.Errorf("the back server's request status is %v: the cookie uid=42 of the request the front handler "+
			"served was not carried on (TarsCpp: processCookie + CookieOp + checkCookie put it in every "+
			"call the handler makes)", st)
	}
}
