package communicator_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestAttribSendBufferFullCountedUnderEndpoint: a call refused by its chosen endpoint's
// send-buffer-limit (calls queued while the endpoint is still connecting count) ends with
// ErrQueueFull in a *CallError naming that endpoint, and the interceptor names it too; Stats must
// count it under that endpoint (stats.Key: "" is for calls that ended before an endpoint was
// chosen).
//
// Before, it was counted under endpoint "".
func TestAttribSendBufferFullCountedUnderEndpoint(t *testing.T) {
	st := startStalled(t) // connects hang: the first call waits in the send queue
	addr := st.Addr()
	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(func(c *conf.Config) {
		c.SendBufferLimit = 64 << 10
	}), communicator.WithInterceptor(ic.icpt()))
	sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
	ctx := testCtx(t)
	name := strings.Repeat("q", 100<<10) // one call is above the limit

	first := make(chan error, 1)
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name}, new(hellopb.HelloReply), func(err error) { first <- err }, servantproxy.WithTimeout(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the first call is queued on the connecting endpoint", func() bool {
		e, _ := attribEndpointStats(comm.Stats(), addr)
		return e.Sent == 1
	})
	err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name}, new(hellopb.HelloReply), servantproxy.WithTimeout(2*time.Second))
	if !errors.Is(err, communicator.ErrQueueFull) {
		t.Fatalf("second call: err = %v, want ErrQueueFull (send-buffer-limit while connecting)", err)
	}
	if got := attribEndpointOf(err); got != addr {
		t.Errorf("second call: CallError names endpoint %q, want %q", got, addr)
	}
	ends := ic.all()
	if len(ends) != 1 || ends[0].Endpoint != addr {
		t.Errorf("interceptor Ends so far = %+v, want one naming %s", ends, addr)
	}
	rows := attribRows(comm.Stats(), "SayHello")
	if rows[addr]["queue_full"] != 1 || rows[""] != nil {
		t.Errorf("Stats rows: %s; want the queue_full call in the row of endpoint %s, whose name its error and the interceptor carry, and no row for endpoint \"\"",
			attribRowsString(rows), addr)
	}
	<-first
}

// TestAttribTooLargeCounted: a request above max-packet-size fails alone, unsent, with
// ErrRequestTooLarge naming the endpoint it was routed to (README "Bad input"). It is not a
// connection failure (stats.Connection: "the connection could not be made or was lost before a
// reply"; the error does not match ErrConnection), and its endpoint was chosen: Stats must not
// count it as "connection" under endpoint "".
//
// Before, it was counted under endpoint "" as a connection failure; it is now stats.Refused.
func TestAttribTooLargeCounted(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(func(c *conf.Config) {
		c.MaxPacketSize = 64 << 10
	}), communicator.WithInterceptor(ic.icpt()))
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 1); err != nil {
		t.Fatal(err)
	}
	err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: strings.Repeat("x", 100<<10)}, new(hellopb.HelloReply))
	if !errors.Is(err, communicator.ErrRequestTooLarge) {
		t.Fatalf("err = %v, want ErrRequestTooLarge", err)
	}
	if errors.Is(err, communicator.ErrConnection) {
		t.Errorf("err %v matches ErrConnection", err)
	}
	if got := attribEndpointOf(err); got != g.addr {
		t.Errorf("CallError names endpoint %q, want %q", got, g.addr)
	}
	rows := attribRows(comm.Stats(), "SayHello")
	if rows[""] != nil {
		t.Errorf("Stats rows: %s; the too-large call is counted under endpoint \"\" though its error names %s", attribRowsString(rows), g.addr)
	}
	if rows[g.addr]["connection"] != 0 || rows[""]["connection"] != 0 {
		t.Errorf("Stats rows: %s; the too-large call is counted as a connection failure (its error does not match ErrConnection; the connection is fine)", attribRowsString(rows))
	}
	if attribTotal(comm.Stats(), "SayHello") != 2 {
		t.Errorf("Stats rows: %s; want 2 calls counted", attribRowsString(rows))
	}
}

// TestAttribDatagramTooLargeCounted: over udp, a request larger than one datagram fails
// unsent with ErrDatagramTooLarge naming the endpoint it was routed to (README "UDP"). As for
// max-packet-size: its endpoint was chosen, and it is no connection failure (the error does not
// match ErrConnection); Stats counts it as "connection" under endpoint "".
//
// Before, it was counted under endpoint "" as a connection failure; it is now stats.Refused.
func TestAttribDatagramTooLargeCounted(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	addr := pc.LocalAddr().String()
	host, port, _ := net.SplitHostPort(addr)
	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(nil), communicator.WithInterceptor(ic.icpt()))
	sp := proxyToAddrs(t, comm, "udp -h "+host+" -p "+port)
	err = sp.Invoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: strings.Repeat("u", 70<<10)}, new(hellopb.HelloReply), servantproxy.WithTimeout(time.Second))
	if !errors.Is(err, communicator.ErrDatagramTooLarge) {
		t.Fatalf("err = %v, want ErrDatagramTooLarge", err)
	}
	if got := attribEndpointOf(err); got != addr {
		t.Errorf("CallError names endpoint %q, want %q", got, addr)
	}
	if ends := ic.all(); len(ends) != 1 || ends[0].Endpoint != addr {
		t.Errorf("interceptor Ends = %+v, want one naming %s", ends, addr)
	}
	rows := attribRows(comm.Stats(), "SayHello")
	if rows[""] != nil || rows[addr]["connection"] != 0 || attribTotal(comm.Stats(), "SayHello") != 1 {
		t.Errorf("Stats rows: %s; want the one call under %s (whose name its error carries), not as a connection failure (err %v matches ErrConnection: %v)",
			attribRowsString(rows), addr, err, errors.Is(err, communicator.ErrConnection))
	}
}
