package communicator_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestAttribBackoffRefusalCountedUnderEndpoint: a call refused at once because its
// endpoint's reconnect backoff runs ("not reconnecting yet") ends with a *CallError that names
// the endpoint, and the interceptor's CallInfo.Endpoint names it too. stats.Key documents
// Endpoint "" as "calls that ended before an endpoint was chosen": this one had its endpoint
// chosen (it is named to the caller), so Stats must count it in the endpoint's row, as the
// refused connect before it is — not in a row of endpoint "".
//
// Before, the calls refused by the backoff were counted under endpoint "" (c.Rec was set only once queued).
func TestAttribBackoffRefusalCountedUnderEndpoint(t *testing.T) {
	ln := listenLoopback(t)
	addr := ln.Addr().String()
	_ = ln.Close() // connects are refused

	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(nil), communicator.WithInterceptor(ic.icpt()))
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	ctx := testCtx(t)

	// Calls in a tight loop: the first is refused by the peer (a failed connect), the next ones
	// fall in the 25..150 ms backoff that follows. Stop once several were refused by the backoff.
	var errs []error
	backoffs := 0
	deadline := time.Now().Add(5 * time.Second)
	for backoffs < 3 && time.Now().Before(deadline) {
		err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "b"}, new(hellopb.HelloReply), servantproxy.WithTimeout(time.Second))
		if err == nil {
			t.Fatalf("call to a refused port succeeded")
		}
		errs = append(errs, err)
		if strings.Contains(err.Error(), "not reconnecting yet") {
			backoffs++
		}
	}
	if backoffs == 0 {
		t.Fatalf("no call was refused by the reconnect backoff in %d calls (errors: %v)", len(errs), errs)
	}
	for i, err := range errs {
		if !errors.Is(err, communicator.ErrConnection) {
			t.Errorf("call %d: err = %v, want ErrConnection", i, err)
		}
		if got := attribEndpointOf(err); got != addr {
			t.Errorf("call %d: CallError names endpoint %q, want %q (%v)", i, got, addr, err)
		}
	}
	for i, e := range ic.all() {
		if e.Endpoint != addr {
			t.Errorf("interceptor End %d: CallInfo.Endpoint = %q, want %q (err %v)", i, e.Endpoint, addr, e.Err)
		}
	}

	snap := comm.Stats()
	rows := attribRows(snap, "SayHello")
	if total := attribTotal(snap, "SayHello"); total != uint64(len(errs)) {
		t.Errorf("Stats counts %d calls, the caller made %d: %s", total, len(errs), attribRowsString(rows))
	}
	if got := rows[addr]["connection"]; got != uint64(len(errs)) {
		t.Errorf("Stats row (%s, SayHello, %s) counts %d connection failures, want all %d calls (%d of them refused by the backoff, whose errors name %s); rows: %s",
			servant, addr, got, len(errs), backoffs, addr, attribRowsString(rows))
	}
	if r, ok := rows[""]; ok {
		t.Errorf("Stats counts %v under endpoint \"\" (\"ended before an endpoint was chosen\"), but every call's error named endpoint %s", r, addr)
	}
}
