package interceptor_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestMain checks, as the other packages' do, that no test leaves a goroutine behind (the tests
// of this file start a server and a Communicator). The two ignored functions are the
// process-wide goroutines that gnet's dependency ants starts in its package init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

const reviewServant = "Review.Server.GreeterObj"

// callThrough starts a project server on 127.0.0.1:0 whose SayHello handler returns handlerErr,
// with the server interceptors icpts, makes one sync call to it over TCP with a Communicator,
// and returns the TARS return code the client got (0 for a success).
func callThrough(t *testing.T, handlerErr error, icpts ...interceptor.Server) int32 {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1), server.WithInterceptor(icpts...))
	err := server.HandleProto(s, reviewServant, "SayHello",
		func(context.Context, *server.Current, *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			if handlerErr != nil {
				return nil, handlerErr
			}
			return &hellopb.HelloReply{Message: "hi"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	}()
	comm, err := communicator.New(conf.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer comm.Close()
	host, port, _ := net.SplitHostPort(a.String())
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(reviewServant+"@tcp -h "+host+" -p "+port, &sp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply))
	if err == nil {
		return 0
	}
	var se *servantproxy.ServerError
	if !errors.As(err, &se) {
		t.Fatalf("call failed without a reply: %v", err)
	}
	return se.Code
}

// outerRecorder is a server interceptor that records info.Ret once its next has returned.
func outerRecorder(seen *atomic.Int32) interceptor.Server {
	return func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
		err := next(ctx, info)
		seen.Store(info.Ret)
		return err
	}
}

// TestChainServerRefusalSetsRet: two server interceptors composed with interceptor.ChainServer,
// the inner one refusing the request with a TARS error (-7) without calling next, as an auth or
// rate-limit interceptor does: the outer one sees info.Ret -7 after its next returns, the code
// the client gets. ChainServer's next used to leave it at 0 (the server's own chain for
// WithInterceptor(a, b) repaired it; the server now uses ChainServer itself).
func TestChainServerRefusalSetsRet(t *testing.T) {
	var seen atomic.Int32
	seen.Store(12345)
	refuse := func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
		return &server.Error{Code: -7, Desc: "refused"}
	}
	got := callThrough(t, nil, interceptor.ChainServer(outerRecorder(&seen), refuse))
	if got != -7 {
		t.Fatalf("the client got %d, want -7", got)
	}
	if r := seen.Load(); r != got {
		t.Errorf("the outer interceptor saw info.Ret = %d after next returned; the client got %d", r, got)
	}
}

// TestServerChainInnerRewritesError: server.WithInterceptor(outer, inner), a handler failing
// with -5, and an inner interceptor that replaces the error with -7 or swallows it (a fallback):
// the outer one sees info.Ret -7, or 0, the code the client gets. It used to see the handler's
// -5 (the code was filled only when still 0).
func TestServerChainInnerRewritesError(t *testing.T) {
	for _, tc := range []struct {
		name string
		with error // what the inner interceptor returns instead of the handler's error
		want int32 // what the client gets
	}{
		{"replace", &server.Error{Code: -7, Desc: "replaced"}, -7},
		{"swallow", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Int32
			seen.Store(12345)
			inner := func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
				_ = next(ctx, info)
				return tc.with
			}
			got := callThrough(t, &server.Error{Code: -5, Desc: "handler"}, outerRecorder(&seen), inner)
			if got != tc.want {
				t.Fatalf("the client got %d, want %d", got, tc.want)
			}
			if r := seen.Load(); r != got {
				t.Errorf("the outer interceptor saw info.Ret = %d after next returned; the client got %d", r, got)
			}
		})
	}
}
