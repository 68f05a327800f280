package communicator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
)

// TestCloseFinalReportCountsCallsInFlight: a Communicator reports to a StatF servant
// (stat, report-interval of an hour: only Close's final report is sent). 4 calls succeed; one
// more is in flight (the server holds it) when Close is called. Close ends that call (its caller
// gets an error) and sends its final report. The final report must account for every call the
// caller saw end: 4 successes and 1 failure. Before, it carried the 4 successes only: Close sent
// the final report first, and failed the calls in flight after, when nothing reported any more.
func TestCloseFinalReportCountsCallsInFlight(t *testing.T) {
	sink, saddr := startSummingSink(t)

	a := startGreeter(t, "a", serverOpt{})
	seen := make(chan *server.Current, 8)
	g := startGreeter(t, "b", serverOpt{block: true, seen: seen})
	comm := newComm(t, func(c *conf.Config) {
		c.Stat = statServant + "@" + tcpEndpoint(saddr.String())
		c.ModuleName = "Test.Client"
		c.ReportInterval = time.Hour
	})
	spA, sp := proxyTo(t, comm, a), proxyTo(t, comm, g)
	ctx := testCtx(t)
	const oks = 4
	for i := range oks {
		if _, err := sayHello(ctx, spA, "x", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	go func() {
		_, err := sayHello(ctx, sp, "held", 99)
		errc <- err
	}()
	select {
	case <-seen:
	case <-time.After(live):
		t.Fatal("the held call did not reach the server")
	}
	_ = closeComm(t, comm)
	var callErr error
	select {
	case callErr = <-errc:
	case <-time.After(live):
		t.Fatal("the call in flight did not end at Close")
	}
	if callErr == nil {
		t.Fatal("the call in flight at Close succeeded: the test needs it to fail")
	}
	if !errors.Is(callErr, communicator.ErrClosed) {
		t.Logf("the call in flight ended with %v", callErr)
	}
	if got := sink.get("SayHello", a.addr); got.Count != oks || got.ExecCount+got.TimeoutCount != 0 {
		t.Errorf("Close's final report carried %d successes, %d failures of SayHello to %s; want %d successes",
			got.Count, got.ExecCount+got.TimeoutCount, a.addr, oks)
	}
	if got := sink.get("SayHello", g.addr); got.Count+got.ExecCount+got.TimeoutCount != 1 || got.Count != 0 {
		t.Errorf("Close's final report carried %d successes, %d timeouts and %d exceptions of SayHello to %s; "+
			"the caller saw that call fail (%v): the call that Close ended is in no report",
			got.Count, got.TimeoutCount, got.ExecCount, g.addr, callErr)
	}
}
