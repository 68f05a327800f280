package communicator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestUnmarshallableRequestIsCallError: a protobuf request that proto.Marshal
// refuses (a proto3 string holding invalid UTF-8, as bytes copied from a socket or a file may) is
// a call that fails without a reply. README's Errors section: such a call "ends with a
// *communicator.CallError ... that names the servant, the function, the endpoint (when one was
// chosen) and the time spent, and wraps the reason", in every style (sync, async, future, through
// the generated hellopb stub too), and it matches ErrEncode. Before, it was a bare
// fmt error ("tarscomm: marshal ... request: codec: tag 7: ...") that no sentinel matched.
func TestUnmarshallableRequestIsCallError(t *testing.T) {
	addr := errServer(t, func() error { return nil })
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	ctx := testCtx(t)
	bad := func() *hellopb.HelloRequest { return &hellopb.HelloRequest{Name: "bad\xff"} }

	errs := map[string]error{}
	errs["sync"] = sp.Invoke(ctx, "SayHello", bad(), new(hellopb.HelloReply))
	done := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", bad(), new(hellopb.HelloReply), func(err error) { done <- err }); err != nil {
		errs["async"] = err
	} else {
		errs["async"] = waitErr(done, 10*time.Second, "async callback")
	}
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, errs["future"] = sp.FutureInvoke(ctx, "SayHello", bad(), new(hellopb.HelloReply)).Get(gctx)
	errs["oneway"] = sp.InvokeOneway(ctx, "SayHello", bad())
	_, errs["hellopb stub"] = hellopb.NewGreeterProxy(sp).SayHello(ctx, bad())

	for _, style := range []string{"sync", "async", "future", "oneway", "hellopb stub"} {
		err := errs[style]
		var ce *communicator.CallError
		if err == nil {
			t.Errorf("%s call: nil error for a request that does not marshal", style)
		} else if !errors.As(err, &ce) {
			t.Errorf("%s call: %q (%T) is no *communicator.CallError", style, err, err)
		} else if ce.Servant != servant || ce.Func != "SayHello" {
			t.Errorf("%s call: CallError{Servant %q, Func %q}", style, ce.Servant, ce.Func)
		}
		if !errors.Is(err, communicator.ErrEncode) {
			t.Errorf("%s call: %v does not match communicator.ErrEncode", style, err)
		}
	}
}
