package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// The error contract, across call styles: for each failure a peer can cause, a sync call, an
// async call (its callback's error) and a future (Get) end with errors of the same families
// (errors.Is), a *CallError naming servant, function and endpoint for a failure without a reply,
// a *ServerError for a reply with a code; with and without a client interceptor that wraps
// what next returns with %w.

// errFamilies are the exported errors a caller branches on.
var errFamilies = []struct {
	name string
	err  error
}{
	{"ErrTimeout", communicator.ErrTimeout},
	{"ErrConnection", communicator.ErrConnection},
	{"ErrNoEndpoint", communicator.ErrNoEndpoint},
	{"ErrQueueFull", communicator.ErrQueueFull},
	{"ErrOverload", communicator.ErrOverload},
	{"ErrClosed", communicator.ErrClosed},
	{"ErrRequestTooLarge", communicator.ErrRequestTooLarge},
	{"ErrNaming", communicator.ErrNaming},
	{"context.Canceled", context.Canceled},
	{"context.DeadlineExceeded", context.DeadlineExceeded},
}

// familiesOf lists the families err matches, plus "ServerError(code)" and "CallError".
func familiesOf(err error) string {
	if err == nil {
		return "nil"
	}
	var fs []string
	for _, f := range errFamilies {
		if errors.Is(err, f.err) {
			fs = append(fs, f.name)
		}
	}
	var se *communicator.ServerError
	if errors.As(err, &se) {
		fs = append(fs, fmt.Sprintf("ServerError(%d)", se.Code))
	}
	var ce *communicator.CallError
	if errors.As(err, &ce) {
		fs = append(fs, "CallError")
	}
	return strings.Join(fs, ",")
}

// wrappingInterceptor is a client interceptor that returns what next returned wrapped with %w, and
// records the error End was given.
type wrappingInterceptor struct {
	mu    sync.Mutex
	ended []error
	eps   []string
}

func (w *wrappingInterceptor) icpt() interceptor.Client {
	return func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.OnEnd(func(ci *interceptor.CallInfo) {
			w.mu.Lock()
			w.ended = append(w.ended, ci.Err)
			w.eps = append(w.eps, ci.Endpoint)
			w.mu.Unlock()
		})
		if err := next(ctx, info); err != nil {
			return fmt.Errorf("wrapping interceptor: %w", err)
		}
		return nil
	}
}

// errCallStyles makes one call of each style to sp and returns their errors.
func errCallStyles(t *testing.T, sp *servantproxy.ServantProxy, timeout time.Duration) map[string]error {
	t.Helper()
	ctx := testCtx(t)
	opt := servantproxy.WithTimeout(timeout)
	out := map[string]error{}

	out["sync"] = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "s"}, new(hellopb.HelloReply), opt)

	done := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "a"}, new(hellopb.HelloReply), func(err error) { done <- err }, opt); err != nil {
		out["async"] = err
	} else {
		out["async"] = waitErr(done, 10*time.Second, "async callback")
	}

	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, out["future"] = sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "f"}, new(hellopb.HelloReply), opt).Get(fctx)
	return out
}

// errPeer is one way a peer can fail a call.
type errPeer struct {
	name   string
	start  func(t *testing.T) string // returns host:port
	family string                    // the families each call style must match
	named  bool                      // a *CallError naming the endpoint
}

func errPeers() []errPeer {
	raw := func(h rawHandler) func(t *testing.T) string {
		return func(t *testing.T) string { return startRawServer(t, h).addr() }
	}
	return []errPeer{
		{"refuse", func(t *testing.T) string {
			ln := listenLoopback(t)
			a := ln.Addr().String()
			_ = ln.Close()
			return a
		}, "ErrConnection,CallError", true},
		{"accept-and-close", raw(func(*codec.RequestPacket, net.Conn) bool { return false }), "ErrConnection,CallError", true},
		{"never-answer", raw(func(*codec.RequestPacket, net.Conn) bool { return true }), "ErrTimeout,context.DeadlineExceeded,CallError", true},
		{"garbage", raw(func(_ *codec.RequestPacket, w net.Conn) bool {
			_, _ = w.Write([]byte("\x00\x00\x00\x14HTTP/1.1 400 Bad Req"))
			return true
		}), "ErrConnection,CallError", true},
		{"wrong-request-id", raw(func(req *codec.RequestPacket, w net.Conn) bool {
			_, _ = w.Write(replyFrame(req, req.RequestID+1000, nil))
			return true
		}), "ErrTimeout,context.DeadlineExceeded,CallError", true},
		{"server-error", func(t *testing.T) string {
			return errServer(t, func() error { return &server.Error{Code: -7, Desc: "busy"} })
		}, "ServerError(-7)", false},
		{"server-overload", func(t *testing.T) string {
			return errServer(t, func() error { return &server.Error{Code: codec.RetOverload, Desc: "overloaded"} })
		}, "ErrOverload,ServerError(-9)", false},
	}
}

// errServer starts the project's server whose SayHello fails with fail(); Cleanup stops it.
func errServer(t *testing.T, fail func() error) string {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1))
	if err := server.HandleProto(s, servant, "SayHello", func(context.Context, *server.Current, *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return nil, fail()
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "error server", s) })
	return a.String()
}

// TestErrorMatrix: every peer failure (refused, accepted and closed, never answered, garbage, a
// reply with a wrong request id, server codes -7 and -9) ends alike in every call style (sync,
// async, future), with and without an interceptor that wraps with %w: the same error families
// (errors.Is), a *CallError naming servant, function and endpoint, and the interceptor told the
// same. A guard: it passed when written.
func TestErrorMatrix(t *testing.T) {
	for _, peer := range errPeers() {
		for _, hooked := range []bool{false, true} {
			name := peer.name + "/plain"
			if hooked {
				name = peer.name + "/interceptor"
			}
			t.Run(name, func(t *testing.T) {
				addr := peer.start(t)
				w := new(wrappingInterceptor)
				var opts []communicator.Option
				if hooked {
					opts = append(opts, communicator.WithInterceptor(w.icpt()))
				}
				comm := newCommWith(t, faultConf(nil), opts...)
				sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
				errs := errCallStyles(t, sp, 300*time.Millisecond)
				for _, style := range []string{"sync", "async", "future"} {
					err := errs[style]
					if got := familiesOf(err); got != peer.family {
						t.Errorf("%s call, peer %s: err %v matches [%s], want [%s]", style, peer.name, err, got, peer.family)
					}
					var ce *communicator.CallError
					if peer.named && errors.As(err, &ce) {
						if ce.Servant != servant || ce.Func != "SayHello" || ce.Endpoint != addr || ce.Elapsed <= 0 {
							t.Errorf("%s call, peer %s: CallError{Servant %q, Func %q, Endpoint %q, Elapsed %v}, want %q, SayHello, %q, > 0",
								style, peer.name, ce.Servant, ce.Func, ce.Endpoint, ce.Elapsed, servant, addr)
						}
					}
				}
				if hooked {
					w.mu.Lock()
					defer w.mu.Unlock()
					if len(w.ended) != 3 {
						t.Fatalf("interceptor End ran %d times for 3 calls", len(w.ended))
					}
					for i, err := range w.ended {
						if got := familiesOf(err); got != peer.family {
							t.Errorf("interceptor End %d, peer %s: info.Err %v matches [%s], want [%s]", i, peer.name, err, got, peer.family)
						}
						if w.eps[i] != addr {
							t.Errorf("interceptor End %d, peer %s: info.Endpoint %q, want %q", i, peer.name, w.eps[i], addr)
						}
					}
				}
			})
		}
	}
}
