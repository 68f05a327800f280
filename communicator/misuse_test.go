package communicator_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/future"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// The misuse tests call the public API with arguments no call can be made with, or with messages
// that panic, and check that each call is refused with an error that says why (or, once accepted,
// ends exactly once), that nothing it took is kept (the Communicator still closes), and that the
// next good call succeeds.

// TestMisuseNilContext: every entry point refuses a nil ctx with an error naming it, before it
// reserves anything, with and without the hooks (WithDyeing takes the hooked path, which once
// panicked after an async call had reserved a slot that Close then waited for forever).
func TestMisuseNilContext(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	c := newComm(t, livenessTimeouts)
	sp := proxyTo(t, c, g)
	req := &hellopb.HelloRequest{Name: "x", Seq: 1}
	var nilCtx context.Context
	for _, opts := range [][]servantproxy.CallOption{nil, {servantproxy.WithDyeing("k")}} {
		calls := map[string]func() error{
			"Invoke": func() error { return sp.Invoke(nilCtx, "SayHello", req, new(hellopb.HelloReply), opts...) },
			"InvokeRaw": func() error {
				_, err := sp.InvokeRaw(nilCtx, "SayHello", nil, opts...)
				return err
			},
			"Ping":            func() error { return sp.Ping(nilCtx, opts...) },
			"InvokeOneway":    func() error { return sp.InvokeOneway(nilCtx, "SayHello", req, opts...) },
			"InvokeOnewayRaw": func() error { return sp.InvokeOnewayRaw(nilCtx, "SayHello", nil, opts...) },
			"AsyncInvoke": func() error {
				return sp.AsyncInvoke(nilCtx, "SayHello", req, new(hellopb.HelloReply), func(error) { t.Error("callback of a refused call") }, opts...)
			},
			"AsyncInvokeRaw": func() error {
				return sp.AsyncInvokeRaw(nilCtx, "SayHello", nil, func([]byte, error) { t.Error("callback of a refused call") }, opts...)
			},
			"FutureInvoke": func() error {
				_, err, done := sp.FutureInvoke(nilCtx, "SayHello", req, new(hellopb.HelloReply), opts...).Result()
				if !done {
					return errors.New("future not completed at once")
				}
				return err
			},
			"FutureInvokeRaw": func() error {
				_, err, done := sp.FutureInvokeRaw(nilCtx, "SayHello", nil, opts...).Result()
				if !done {
					return errors.New("future not completed at once")
				}
				return err
			},
		}
		for name, f := range calls {
			if err := f(); err == nil || !strings.Contains(err.Error(), "nil context") {
				t.Errorf("%s (%d options) with a nil ctx: err = %v, want an error naming the nil context", name, len(opts), err)
			}
		}
	}
	var rsp hellopb.HelloReply
	if err := sp.Invoke(testCtx(t), "SayHello", req, &rsp); err != nil {
		t.Fatalf("a good call after the refused ones: %v", err)
	}
	if err := closeComm(t, c); err != nil {
		t.Fatalf("Close after the refused calls: %v", err)
	}
}

// TestMisuseTypedNilRsp: a typed nil rsp (var rsp *pb.Reply) is refused by the sync, async and
// future calls with an error naming it; before, an async call was accepted and its decode
// panicked on the async worker, so its callback never ran and its future never completed.
func TestMisuseTypedNilRsp(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	c := newComm(t, livenessTimeouts)
	sp := proxyTo(t, c, g)
	req := &hellopb.HelloRequest{Name: "x", Seq: 1}
	var rsp *hellopb.HelloReply
	want := "rsp is a nil *hellopb.HelloReply"
	if err := sp.Invoke(testCtx(t), "SayHello", req, rsp); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Invoke: err = %v, want %q", err, want)
	}
	if err := sp.AsyncInvoke(testCtx(t), "SayHello", req, rsp, func(error) { t.Error("callback of a refused call") }); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AsyncInvoke: err = %v, want %q", err, want)
	}
	if _, err, done := sp.FutureInvoke(testCtx(t), "SayHello", req, rsp).Result(); !done || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("FutureInvoke: done = %v, err = %v, want %q at once", done, err, want)
	}
	// An untyped nil rsp is allowed: the reply is not decoded.
	if err := sp.Invoke(testCtx(t), "SayHello", req, nil); err != nil {
		t.Errorf("Invoke with a nil rsp: %v", err)
	}
}

// panicsOnReflect is a request whose marshalling panics.
type panicsOnReflect struct{ *hellopb.HelloRequest }

func (panicsOnReflect) ProtoReflect() protoreflect.Message { panic("a broken message type") }

// panicsOnDecode is a reply type that passes the call's checks (its first ProtoReflect) and
// panics when the reply is decoded into it.
type panicsOnDecode struct {
	*hellopb.HelloReply
	n atomic.Int32
}

func (m *panicsOnDecode) ProtoReflect() protoreflect.Message {
	if m.n.Add(1) > 1 {
		panic("a broken message type")
	}
	return m.HelloReply.ProtoReflect()
}

// TestMisusePanickingMessages: a request whose marshalling panics fails its call with an error
// (sync and async) and gives back what the call took: the servant's max-inflight slot and the
// async reservation, so that later calls run and Close returns. A reply whose decoding panics on
// the async worker ends the accepted call with an error: its callback runs once.
func TestMisusePanickingMessages(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	c := newComm(t, func(cfg *conf.Config) {
		livenessTimeouts(cfg)
		cfg.Servants = map[string]conf.Servant{servant: {MaxInflight: 1}}
	})
	sp := proxyTo(t, c, g)
	bad := panicsOnReflect{&hellopb.HelloRequest{Name: "x"}}
	for range 3 { // max-inflight 1: a slot kept by the first failure would refuse the next
		if err := sp.Invoke(testCtx(t), "SayHello", bad, new(hellopb.HelloReply)); err == nil || !strings.Contains(err.Error(), "panic: a broken message type") {
			t.Fatalf("Invoke with a request that panics: err = %v", err)
		}
		if err := sp.AsyncInvoke(testCtx(t), "SayHello", bad, new(hellopb.HelloReply), func(error) { t.Error("callback of a refused call") }); err == nil || !strings.Contains(err.Error(), "panic: a broken message type") {
			t.Fatalf("AsyncInvoke with a request that panics: err = %v", err)
		}
	}
	if n := sp.Inflight(); n != 0 {
		t.Fatalf("%d calls in flight after the failed ones, want 0", n)
	}

	rsp := &panicsOnDecode{HelloReply: new(hellopb.HelloReply)}
	var calls atomic.Int32
	errc := make(chan error, 2)
	if err := sp.AsyncInvoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 2}, rsp, func(err error) {
		calls.Add(1)
		errc <- err
	}); err != nil {
		t.Fatalf("AsyncInvoke with a reply type that panics when decoded: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, servantproxy.ErrDecode) || !strings.Contains(err.Error(), "panic: a broken message type") {
			t.Fatalf("callback err = %v, want the decoding's panic as an error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the callback of an accepted call whose reply decoding panicked never ran")
	}
	var good hellopb.HelloReply
	if err := sp.Invoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 3}, &good); err != nil {
		t.Fatalf("a good call after the panics: %v", err)
	}
	if err := closeComm(t, c); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the callback ran %d times, want 1", n)
	}
}

// TestMisusePanickingOnDone: a future call's OnDone callback that panics does not keep the
// future's other callbacks from running: a Join made before the reply returns once it arrives.
func TestMisusePanickingOnDone(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{block: true})
	c := newComm(t, livenessTimeouts)
	sp := proxyTo(t, c, g)

	f := sp.FutureInvoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 1}, new(hellopb.HelloReply))
	f.OnDone(func(proto.Message, error) { panic("a bug in one observer") })
	joined := make(chan error, 1)
	go func() { joined <- future.Join(testCtx(t), f) }()
	close(g.release) // the server answers now
	select {
	case err := <-joined:
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
	case <-time.After(10 * time.Second):
		_, ferr, done := f.Result()
		t.Fatalf("Join did not return although the future completed (done=%v, err=%v)", done, ferr)
	}
}

// TestMisuseBeforeLoad: an invalid option is reported as such whatever the Communicator's state:
// after Close, a call with WithTimeout(-1) fails with ErrInvalidTimeout, sync and async (the async
// one used to report the async pool's ErrClosed, as it would ErrQueueFull under load).
func TestMisuseBeforeLoad(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	c := newComm(t, livenessTimeouts)
	sp := proxyTo(t, c, g)
	if err := closeComm(t, c); err != nil {
		t.Fatal(err)
	}
	req := &hellopb.HelloRequest{Name: "x", Seq: 1}
	bad := servantproxy.WithTimeout(-1)
	if err := sp.Invoke(testCtx(t), "SayHello", req, new(hellopb.HelloReply), bad); !errors.Is(err, servantproxy.ErrInvalidTimeout) {
		t.Errorf("Invoke after Close with WithTimeout(-1): %v, want ErrInvalidTimeout", err)
	}
	if err := sp.AsyncInvoke(testCtx(t), "SayHello", req, new(hellopb.HelloReply), func(error) { t.Error("callback of a refused call") }, bad); !errors.Is(err, servantproxy.ErrInvalidTimeout) {
		t.Errorf("AsyncInvoke after Close with WithTimeout(-1): %v, want ErrInvalidTimeout", err)
	}
	if err := sp.Invoke(testCtx(t), "SayHello", req, new(hellopb.HelloReply)); !errors.Is(err, servantproxy.ErrClosed) {
		t.Errorf("Invoke after Close: %v, want ErrClosed", err)
	}
}
