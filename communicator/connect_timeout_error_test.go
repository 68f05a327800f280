package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestConnectTimeoutNotDeadline: a call to an endpoint whose connect hangs past connect-timeout,
// well within the call's own timeout, fails with ErrConnection (the request was never written)
// and never matches context.DeadlineExceeded, which the docs make the other name of ErrTimeout
// (the call's deadline passed, and the request may have run). Each call below dials anew (it
// waits out the reconnect backoff), in turn sync, async and future. Before, the *ConnError
// wrapped net's dial error, which was either the dial ctx's timeout (whose Is matches
// context.DeadlineExceeded) or the socket's write deadline (os.ErrDeadlineExceeded, which does
// not), whichever the dialer saw first: about 7 calls in 10 matched both families.
func TestConnectTimeoutNotDeadline(t *testing.T) {
	st := startStalled(t)
	comm := newComm(t, faultConf(func(c *conf.Config) { c.ConnectTimeout = 30 * time.Millisecond }))
	sp := proxyToAddrs(t, comm, tcpEndpoint(st.Addr()))
	ctx := testCtx(t)
	opt := servantproxy.WithTimeout(5 * time.Second)

	call := func(style string) error {
		req := &hellopb.HelloRequest{Name: style}
		switch style {
		case "sync":
			return sp.Invoke(ctx, "SayHello", req, new(hellopb.HelloReply), opt)
		case "async":
			done := make(chan error, 1)
			if err := sp.AsyncInvoke(ctx, "SayHello", req, new(hellopb.HelloReply), func(err error) { done <- err }, opt); err != nil {
				return err
			}
			return waitErr(done, 10*time.Second, "async callback")
		}
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := sp.FutureInvoke(ctx, "SayHello", req, new(hellopb.HelloReply), opt).Get(gctx)
		return err
	}
	var both []string
	for i := range 9 {
		style := []string{"sync", "async", "future"}[i%3]
		err := call(style)
		if !errors.Is(err, communicator.ErrConnection) {
			t.Fatalf("%s call %d, connect timed out: err %v, want ErrConnection", style, i, err)
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, communicator.ErrTimeout) {
			both = append(both, fmt.Sprintf("%s call %d: %v matches [%s]", style, i, err, familiesOf(err)))
		}
		time.Sleep(200 * time.Millisecond) // past the reconnect backoff (at most 150 ms): the next call dials
	}
	for _, b := range both {
		t.Errorf("connect timed out after 30ms of a 5s call, and the error matches ErrConnection and the call-timeout family (context.DeadlineExceeded) at once: %s", b)
	}
	if len(both) > 0 {
		t.Logf("%d of 9 calls matched both families, the others ErrConnection only: the same failure is classified by chance", len(both))
	}
}
