package communicator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/protocol/propertyf"
	"github.com/tarscomm/tarscomm/report/property"
	"github.com/tarscomm/tarscomm/server"
)

// propSink is a PropertyF servant keeping the heads and bodies of this process's reports.
type propSink struct {
	mu  sync.Mutex
	got map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody
}

func (s *propSink) ReportPropMsg(_ context.Context, cur *server.Current, m map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody) (int32, error) {
	if !ownCaller(cur) {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, b := range m {
		s.got[h] = b
	}
	return 0, nil
}

// TestPropertyHeadSetFields: a client in set app.sz.1 (enableset, setdivision) reports a
// property. TarsCpp (Communicator passes its set division to StatReport::setReportInfo when set is
// on; StatReport::reportPropMsg) sends moduleName "<modulename>.<name><area><group>" and the set
// in setName, setArea and setID (TARS_FRAMEWORK.md, PropertyF: "C++: ModuleName[.setNameAreaId]"),
// so that the property service keeps each set's figures apart. The stat head carries the set
// (TestStatHeadSetFields), and the property head now too (before, it carried none).
func TestPropertyHeadSetFields(t *testing.T) {
	sink := &propSink{got: map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody{}}
	srv := server.New()
	const obj = "tars.tarsproperty.PropertyObj"
	if err := propertyf.RegisterPropertyF(srv, obj, sink); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "property server", srv) })

	name := fmt.Sprintf("review.set.%d", time.Now().UnixNano()) // property.Default is process-wide
	property.New(name, property.Count()).Report(1)
	comm := newComm(t, func(c *conf.Config) {
		c.Property = obj + "@" + tcpEndpoint(addr.String())
		c.ModuleName = "Test.Client"
		c.ReportInterval = time.Hour // only Close's final report
		c.EnableSet = true
		c.SetDivision = "app.sz.1"
	})
	_ = closeComm(t, comm)

	sink.mu.Lock()
	defer sink.mu.Unlock()
	var found []propertyf.StatPropMsgHead
	for h := range sink.got {
		if h.PropertyName == name {
			found = append(found, h)
		}
	}
	if len(found) != 1 {
		t.Fatalf("property %s reported under %d heads (%+v), want 1", name, len(found), found)
	}
	h := found[0]
	if h.ModuleName != "Test.Client.appsz1" || h.SetName != "app" || h.SetArea != "sz" || h.SetID != "1" {
		t.Errorf("property head of a client in set app.sz.1:\n got moduleName %q set %q.%q.%q\nwant moduleName %q set %q.%q.%q (TarsCpp's)",
			h.ModuleName, h.SetName, h.SetArea, h.SetID, "Test.Client.appsz1", "app", "sz", "1")
	}
}

// TestStatOnewayNotCounted: TarsCpp's AdapterProxy deletes a one-way request once it is
// sent, without AdapterProxy::stat (invoke_connection_parallel, doInvoke_parallel): a one-way
// call that was sent is in no stat report (one that fails, e.g. times out unsent, is an
// exception). Here 1 sync call and 3 one-way calls are sent to SayHello and all succeed: the
// report counts 1 success. Before, the one-way sends were counted as successes, inflating count
// and putting their ~0 ms "latency" (time to write) into the buckets, totalRspTime and minRspTime.
func TestStatOnewayNotCounted(t *testing.T) {
	sink, saddr := startSummingSink(t)
	seen := make(chan *server.Current, 16)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	comm := newComm(t, func(c *conf.Config) {
		c.Stat = statServant + "@" + tcpEndpoint(saddr.String())
		c.ModuleName = "Test.Client"
		c.ReportInterval = time.Hour // only Close's final report
	})
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	const oneways = 3
	for i := range oneways {
		if err := sp.InvokeOneway(ctx, "SayHello", &hellopb.HelloRequest{Name: "oneway", Seq: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sayHello(ctx, sp, "x", 1); err != nil {
		t.Fatal(err)
	}
	for range oneways + 1 {
		select {
		case <-seen:
		case <-time.After(live):
			t.Fatal("a call did not reach the server")
		}
	}
	_ = closeComm(t, comm)
	got := sink.get("SayHello", g.addr)
	if got.Count != 1 || got.ExecCount != 0 || got.TimeoutCount != 0 {
		t.Errorf("1 sync and %d one-way calls of SayHello, all sent: reported count %d, exec %d, timeout %d; want count 1 (TarsCpp reports no one-way call it sent)",
			oneways, got.Count, got.ExecCount, got.TimeoutCount)
	}
}
