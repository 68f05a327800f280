package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// TestDatagramTooLargeNamesEndpoint: a request too large for a udp datagram is refused
// by the endpoint's AdapterProxy, which the call was routed to: the *CallError must name that
// endpoint (README: "the endpoint (when one was chosen)"), in sync, async and future calls, as a
// request above max-packet-size on tcp does (ErrRequestTooLarge names it). The error's own text
// names it ("udp endpoint host:port"). Before, CallError.Endpoint was left "" (the address was
// set after the datagram check).
func TestDatagramTooLargeNamesEndpoint(t *testing.T) {
	u := startUDPServer(t)
	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 1 })
	sp := udpProxy(t, c, udpEndpoint(u.addr))
	ctx := testCtx(t)
	if _, err := sp.InvokeRaw(ctx, "echo", []byte("warm")); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	want := u.addr.String()
	body := make([]byte, 70000)

	errs := map[string]error{}
	_, errs["sync"] = sp.InvokeRaw(ctx, "echo", body)
	done := make(chan error, 1)
	if err := sp.AsyncInvokeRaw(ctx, "echo", body, func(_ []byte, err error) { done <- err }); err != nil {
		errs["async"] = err
	} else {
		errs["async"] = waitErr(done, 5*time.Second, "async callback")
	}
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, errs["future"] = sp.FutureInvokeRaw(ctx, "echo", body).Get(gctx)

	for _, style := range []string{"sync", "async", "future"} {
		err := errs[style]
		var ce *communicator.CallError
		if !errors.Is(err, communicator.ErrDatagramTooLarge) || !errors.As(err, &ce) {
			t.Errorf("%s call of 70000 bytes over udp: err %v, want a *CallError matching ErrDatagramTooLarge", style, err)
			continue
		}
		if ce.Endpoint != want {
			t.Errorf("%s call of 70000 bytes over udp: CallError.Endpoint = %q, want %q (the endpoint that refused it; message: %q)",
				style, ce.Endpoint, want, fmt.Sprint(err))
		}
	}
	if n := u.calls.Load(); n != 1 {
		t.Errorf("the server ran %d calls, want only the warm-up", n)
	}
}
