package communicator_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestAsyncInterceptorSeesSentContext: an async call with WithContext(m) through a client
// interceptor whose End reads info.Context; the caller reuses m once AsyncInvoke has returned,
// as WithContext allows ("m is encoded before the call returns and may be reused afterwards").
// End, which runs later on an async worker, sees the context that was sent. It used to see the
// caller's own map, with the caller's later write, and the read raced with that write.
func TestAsyncInterceptorSeesSentContext(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{block: true})
	var seen atomic.Value
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.OnEnd(func(i *interceptor.CallInfo) { seen.Store(i.Context["k"]) })
		return next(ctx, info)
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	m := map[string]string{"k": "sent"}
	done := make(chan error, 1)
	err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x", Seq: 1}, new(hellopb.HelloReply),
		func(err error) { done <- err }, servantproxy.WithContext(m))
	if err != nil {
		t.Fatal(err)
	}
	m["k"] = "reused" // allowed: the call has returned, m was encoded
	close(g.release)  // the server answers now
	if err := waitErr(done, 5*time.Second, "async call"); err != nil {
		t.Fatal(err)
	}
	if got := seen.Load(); got != "sent" {
		t.Errorf("the interceptor's OnEnd saw Context[\"k\"] = %v, want %q (what the call sent)", got, "sent")
	}
}
