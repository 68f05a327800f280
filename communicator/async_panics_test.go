package communicator_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestAsyncPanicsContained (a guard): user code that panics on the single
// async worker (an async callback, an async call's interceptor OnEnd, a push callback) is
// recovered there: the process goes on, the callback after an OnEnd panic still runs, later
// callbacks and pushes are still delivered (the push's queued count is given back), and Close
// returns. The pool's own test covers a panicking Finish; nothing covered these user hooks end to
// end through a Communicator.
func TestAsyncPanicsContained(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	addr, subs := startPusher(t)
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		if info.Async && info.Function == "SayHello" {
			info.OnEnd(func(*interceptor.CallInfo) { panic("a bug in an interceptor's OnEnd") })
		}
		return next(ctx, info)
	}
	comm := newCommWith(t, onePushThread, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	// An async callback that panics, then one whose OnEnd panics: the second callback runs.
	first := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "p"}, new(hellopb.HelloReply), func(err error) {
		first <- err
		panic("a bug in an async callback")
	}); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(first, live, "panicking callback"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "q"}, new(hellopb.HelloReply), func(err error) { second <- err }); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(second, live, "callback after two panics"); err != nil {
		t.Fatalf("callback after a panicking callback and a panicking OnEnd: %v, want nil", err)
	}

	// Pushes: OnPush panics on every even one; the odd ones still arrive, in order.
	psp := pushProxy(t, comm, addr)
	got := make(chan string, 16)
	psp.SetPushCallback(&servantproxy.PushCallback{OnPush: func(p *servantproxy.Push) {
		n, _ := strconv.Atoi(string(p.Body))
		if n%2 == 0 {
			panic("a bug in OnPush")
		}
		got <- string(p.Body)
	}})
	pu := subscribe(t, psp, subs)
	for i := 1; i <= 6; i++ {
		if err := pu.Push("Tick", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"1", "3", "5"} {
		if b := recv(t, got, "push "+want); b != want {
			t.Fatalf("push %q, want %q", b, want)
		}
	}
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
}
