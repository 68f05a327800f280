package communicator_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestAttribAsyncInflightRefusalResult: an async call refused by async-inflight-limit
// fails with ErrQueueFull (README "Backpressure", ARCHITECTURE's table: "AsyncInvoke fails at
// Reserve: ErrQueueFull"), not ErrOverload. Stats must count it under the result whose sentinel
// the caller's error matches, queue_full (as every other ErrQueueFull is counted), so that a
// dashboard's queue_full and overload rows mean what the caller's errors.Is says.
//
// Before, it was counted as overload while the caller got ErrQueueFull.
func TestAttribAsyncInflightRefusalResult(t *testing.T) {
	hold := startRawServer(t, func(*codec.RequestPacket, net.Conn) bool { return true }) // never answers
	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(func(c *conf.Config) {
		c.AsyncInFlightLimit = 1
	}), communicator.WithInterceptor(ic.icpt()))
	sp := proxyToAddrs(t, comm, hold.endpoint())
	ctx := testCtx(t)

	first := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "1"}, new(hellopb.HelloReply), func(err error) { first <- err }, servantproxy.WithTimeout(300*time.Millisecond)); err != nil {
		t.Fatalf("first async call: %v", err)
	}
	err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "2"}, new(hellopb.HelloReply), func(error) {
		t.Errorf("the refused call's callback ran")
	}, servantproxy.WithTimeout(300*time.Millisecond))
	if !errors.Is(err, communicator.ErrQueueFull) || errors.Is(err, communicator.ErrOverload) {
		t.Fatalf("second async call: err = %v, want ErrQueueFull (and not ErrOverload) as documented", err)
	}
	if got := waitErr(first, 10*time.Second, "first call's callback"); !errors.Is(got, communicator.ErrTimeout) {
		t.Fatalf("first call: %v, want ErrTimeout", got)
	}
	rows := attribRows(comm.Stats(), "SayHello")
	if rows[""]["queue_full"] != 1 || rows[""]["overload"] != 0 {
		t.Errorf("Stats rows: %s; the refused call's error matches ErrQueueFull (not ErrOverload), want it counted as queue_full, not overload", attribRowsString(rows))
	}
	if rows[hold.addr()]["timeout"] != 1 {
		t.Errorf("Stats rows: %s; want the first call as a timeout of %s", attribRowsString(rows), hold.addr())
	}
}
