package communicator_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/server"
)

// startUndecodable starts a project server whose SayHello answers success with a body that is
// not a protobuf message at all (what a peer of another version, or a TARS-encoded servant
// registered under the same name, may send): the client cannot decode it into HelloReply.
func startUndecodable(t *testing.T) string {
	t.Helper()
	endToEnd(t)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithNumEventLoop(1))
	if err := s.Handle(servant, "SayHello", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		return append(rsp, 0xff, 0xff, 0xff), nil // an unterminated varint tag: invalid wire format
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "server", s) })
	return a.String()
}

// TestUndecodableReplyNamesCall: a reply whose body does not unmarshal into the call's reply
// type ends the call with a *CallError wrapping ErrDecode, which names its servant and function,
// sync, async and future alike.
//
// Before, the error was only "tarscomm: decode reply: proto: cannot parse invalid wire-format
// data": neither a *CallError nor a sentinel to branch on, and no servant in a log line.
func TestUndecodableReplyNamesCall(t *testing.T) {
	addr := startUndecodable(t)
	c := newComm(t, nil)
	prx := new(hellopb.GreeterProxy)
	if err := c.StringToProxy(servant+"@"+tcpEndpoint(addr), prx); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	check := func(kind string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: the undecodable reply was taken for a success", kind)
		}
		if !errors.Is(err, communicator.ErrDecode) || !asCallError(err) {
			t.Errorf("%s: err = %q: want a *CallError matching ErrDecode", kind, err)
		}
		if !strings.Contains(err.Error(), servant) || !strings.Contains(err.Error(), "SayHello") {
			t.Errorf("%s: err = %q: names neither %s nor SayHello (CallError: %v, ServerError: %v)",
				kind, err, servant, asCallError(err), asServerError(err))
		}
	}

	_, err := prx.SayHello(ctx, &hellopb.HelloRequest{Name: "x"})
	check("sync", err)

	errc := make(chan error, 1)
	if err := prx.AsyncSayHello(ctx, &hellopb.HelloRequest{Name: "x"}, func(_ *hellopb.HelloReply, err error) { errc <- err }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		check("async", err)
	case <-time.After(10 * time.Second):
		t.Fatal("async callback never ran")
	}

	_, err = prx.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "x"}).Get(ctx)
	check("future", err)
}

func asCallError(err error) bool {
	var ce *communicator.CallError
	return errors.As(err, &ce)
}

func asServerError(err error) bool {
	var se *communicator.ServerError
	return errors.As(err, &se)
}

// TestSyncDecodePanicEndsCall: a sync call whose reply type panics when the reply is
// unmarshalled into it ends with an error matching ErrDecode, and ends once for the client
// interceptors, as an async call does.
//
// Before, the panic unwound through the interceptors' next before the call's End: a tracing
// span was never ended, an in-flight gauge never went down.
func TestSyncDecodePanicEndsCall(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	var started, ended atomic.Int32
	c := newCommWith(t, nil, communicator.WithInterceptor(func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		started.Add(1)
		info.OnEnd(func(*interceptor.CallInfo) { ended.Add(1) })
		return next(ctx, info)
	}))
	sp := proxyTo(t, c, g)
	rsp := &panicsOnDecode{HelloReply: new(hellopb.HelloReply)}
	var panicked any
	var err error
	func() {
		defer func() { panicked = recover() }()
		err = sp.Invoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 1}, rsp)
	}()
	if panicked != nil || !errors.Is(err, communicator.ErrDecode) {
		t.Errorf("Invoke: panicked with %v, returned %v; want no panic and an error matching ErrDecode", panicked, err)
	}
	if s, e := started.Load(), ended.Load(); s != 1 || e != 1 {
		t.Fatalf("interceptor: %d calls started, %d ended; want 1 and 1 (the call never ended for the interceptors)", s, e)
	}
}
