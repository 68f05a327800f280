package communicator_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestEmptyRawBodyNotShared: InvokeRaw hands the caller the reply body, "the caller
// owns it". An empty reply body (an empty protobuf message, a void .tars function) must then be
// a slice the caller owns like any other: appending to it must not write into memory that the
// library hands to the next call's reply. A pooled Call keeps its body buffer across uses
// (call.Put). Before, TakeBody handed out c.Body = bodyBuf[:0] for an empty body without
// forgetting bodyBuf: the caller's slice had the pooled buffer's capacity, so the caller's
// appends went into it, and the next call that reused the Call copied its reply over them.
func TestEmptyRawBodyNotShared(t *testing.T) {
	sp, ctx := emptyBodyProxy(t)
	other := "another caller's reply " + strings.Repeat("B", 64)
	const mine = "bytes this caller appended to the body it owns"
	for i := range 200 {
		// A typed call: its reply body stays in its pooled Call's buffer once decoded.
		rsp := new(hellopb.HelloReply)
		if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: other, Seq: uint64(i)}, rsp); err != nil {
			t.Fatal(err)
		}
		// A raw call with an empty reply: the caller owns what it gets and appends to it.
		out, err := sp.InvokeRaw(ctx, "Empty", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 0 {
			t.Fatalf("empty reply: got %d bytes", len(out))
		}
		out = append(out, mine...)
		// Other calls go on; none of them may write into the caller's bytes.
		for j := range 4 {
			if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: other, Seq: uint64(1000*i + j)}, new(hellopb.HelloReply)); err != nil {
				t.Fatal(err)
			}
		}
		if got := string(out); got != mine {
			t.Fatalf("round %d: the bytes the caller appended to its empty InvokeRaw reply (cap %d) were overwritten by a later call's reply:\n got  %q\n want %q",
				i, cap(out), got, mine)
		}
	}
}

// TestEmptyFutureRawBodyNotShared: the same through FutureInvokeRaw, whose body is
// handed over by the async worker (finishAsync: TakeBody).
func TestEmptyFutureRawBodyNotShared(t *testing.T) {
	sp, ctx := emptyBodyProxy(t)
	other := "another caller's reply " + strings.Repeat("B", 64)
	const mine = "bytes this caller appended to the body it owns"
	for i := range 200 {
		if _, err := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: other, Seq: uint64(i)}, new(hellopb.HelloReply)).Get(ctx); err != nil {
			t.Fatal(err)
		}
		out, err := sp.FutureInvokeRaw(ctx, "Empty", nil).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 0 {
			t.Fatalf("empty reply: got %d bytes", len(out))
		}
		out = append(out, mine...)
		for j := range 4 {
			if _, err := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: other, Seq: uint64(1000*i + j)}, new(hellopb.HelloReply)).Get(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := string(out); got != mine {
			t.Fatalf("round %d: the bytes the caller appended to its empty FutureInvokeRaw reply (cap %d) were overwritten by a later call's reply:\n got  %q\n want %q",
				i, cap(out), got, mine)
		}
	}
}

// emptyBodyProxy starts a server whose SayHello echoes and whose Empty answers an empty body, and
// a one-thread, one-worker Communicator calling it.
func emptyBodyProxy(t *testing.T) (*servantproxy.ServantProxy, context.Context) {
	t.Helper()
	endToEnd(t)
	s := server.New(server.WithLogger(zap.NewNop()), server.WithNumEventLoop(1))
	if err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName(), Seq: req.GetSeq()}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// An empty reply body: what an empty protobuf message (google.protobuf.Empty) marshals to.
	if err := s.Handle(servant, "Empty", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		return rsp[:0], nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "server", s) })
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 1; c.AsyncThread = 1 })
	return proxyToAddrs(t, comm, tcpEndpoint(a.String())), testCtx(t)
}
