package communicator_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// errStyles makes one call of each style (sync, async, future, oneway) with ctx and returns
// their errors; an async call refused by AsyncInvoke reports that error.
func errStyles(t *testing.T, ctx context.Context, sp *servantproxy.ServantProxy, name string) map[string]error {
	t.Helper()
	out := map[string]error{}
	req := func(s string) *hellopb.HelloRequest { return &hellopb.HelloRequest{Name: name + s} }
	out["sync"] = sp.Invoke(ctx, "SayHello", req("s"), new(hellopb.HelloReply))
	done := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", req("a"), new(hellopb.HelloReply), func(err error) { done <- err }); err != nil {
		out["async"] = err
	} else {
		out["async"] = waitErr(done, 10*time.Second, "async callback")
	}
	gctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, out["future"] = sp.FutureInvoke(ctx, "SayHello", req("f"), new(hellopb.HelloReply)).Get(gctx)
	out["oneway"] = sp.InvokeOneway(ctx, "SayHello", req("o"))
	return out
}

func errCheckStyles(t *testing.T, what string, errs map[string]error, family, endpoint string) {
	t.Helper()
	for _, style := range []string{"sync", "async", "future", "oneway"} {
		err := errs[style]
		if got := familiesOf(err); got != family {
			t.Errorf("%s, %s call: err %v matches [%s], want [%s]", what, style, err, got, family)
			continue
		}
		var ce *communicator.CallError
		if errors.As(err, &ce) && (ce.Servant == "" || ce.Func != "SayHello" || ce.Endpoint != endpoint) {
			t.Errorf("%s, %s call: CallError{Servant %q, Func %q, Endpoint %q}, want SayHello and endpoint %q", what, style, ce.Servant, ce.Func, ce.Endpoint, endpoint)
		}
	}
}

// TestErrorRefusals: the calls refused on the client side (after Close, above max-packet-size,
// no endpoint, ctx cancelled or expired, a refused endpoint, max-inflight reached) end alike in
// every style, one-way included, with and without a wrapping interceptor. A guard: it passed
// when written.
func TestErrorRefusals(t *testing.T) {
	for _, hooked := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "interceptor"}[hooked], func(t *testing.T) { errRefusals(t, hooked) })
	}
}

func errRefusals(t *testing.T, hooked bool) {
	newComm := func(t *testing.T, edit func(*conf.Config), opts ...communicator.Option) *communicator.Communicator {
		if hooked {
			opts = append(opts, communicator.WithInterceptor(new(wrappingInterceptor).icpt()))
		}
		return newCommWith(t, edit, opts...)
	}
	newCommWith := newComm
	t.Run("closed", func(t *testing.T) {
		addr := errServer(t, func() error { return nil })
		comm := newComm(t, faultConf(nil))
		sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
		_ = comm.Close()
		errCheckStyles(t, "after Close", errStyles(t, testCtx(t), sp, "x"), "ErrClosed,CallError", "")
	})
	t.Run("too-large", func(t *testing.T) {
		addr := errServer(t, func() error { return nil })
		comm := newComm(t, faultConf(func(c *conf.Config) { c.MaxPacketSize = 1024 }))
		sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
		errCheckStyles(t, "request above max-packet-size", errStyles(t, testCtx(t), sp, strings.Repeat("x", 4096)), "ErrRequestTooLarge,CallError", addr)
	})
	t.Run("no-endpoint", func(t *testing.T) {
		comm := newCommWith(t, faultConf(nil), communicator.WithNaming(naming.Static{}))
		sp, err := comm.Proxy("Bare.Server.Obj")
		if err != nil {
			t.Fatal(err)
		}
		errCheckStyles(t, "no endpoint", errStyles(t, testCtx(t), sp, "x"), "ErrNoEndpoint,CallError", "")
	})
	t.Run("cancelled", func(t *testing.T) {
		addr := errServer(t, func() error { return nil })
		comm := newComm(t, faultConf(nil))
		sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		errCheckStyles(t, "cancelled ctx", errStyles(t, ctx, sp, "x"), "context.Canceled,CallError", "")
	})
	t.Run("expired", func(t *testing.T) {
		addr := errServer(t, func() error { return nil })
		comm := newComm(t, faultConf(nil))
		sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		errCheckStyles(t, "expired ctx", errStyles(t, ctx, sp, "x"), "ErrTimeout,context.DeadlineExceeded,CallError", "")
	})
	t.Run("refused-endpoint", func(t *testing.T) {
		ln := listenLoopback(t)
		addr := ln.Addr().String()
		_ = ln.Close()
		comm := newComm(t, faultConf(nil))
		sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
		errCheckStyles(t, "refused endpoint", errStyles(t, testCtx(t), sp, "x"), "ErrConnection,CallError", addr)
	})
	t.Run("max-inflight", func(t *testing.T) {
		addr := startRawServer(t, func(*codec.RequestPacket, net.Conn) bool { return true }).addr()
		comm := newComm(t, faultConf(func(c *conf.Config) {
			c.Servants = map[string]conf.Servant{servant: {MaxInflight: 1}}
		}))
		sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
		hold := make(chan error, 1)
		if err := sp.AsyncInvoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "hold"}, nil, func(err error) { hold <- err },
			servantproxy.WithTimeout(5*time.Second)); err != nil {
			t.Fatal(err)
		}
		errCheckStyles(t, "max-inflight reached", errStyles(t, testCtx(t), sp, "x"), "ErrOverload,CallError", "")
		_ = comm.Close()
		<-hold
	})
}
