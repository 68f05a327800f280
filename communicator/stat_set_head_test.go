package communicator_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestStatHeadSetFields: a client in set app.sz.1 (enableset, setdivision) calls a
// servant whose endpoint is in set app.sz.1 (-s), and reports to a StatF servant. TarsCpp's
// client (AdapterProxy's stat head, StatReport::report with bFromClient) names a set client
// "<modulename>.<name><area><group>@<version>", fills slaveSetName, slaveSetArea and slaveSetID
// from the callee's set division and names the callee "<App.Server>.<name><area><group>", so
// that the stat service keeps the set's figures apart; so does this client's report. Before, the
// head had none of it: the masterName of a client outside any set, empty set fields, slaveName
// "Test.Server".
func TestStatHeadSetFields(t *testing.T) {
	sink, saddr := startSummingSink(t)

	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) {
		c.Stat = statServant + "@" + tcpEndpoint(saddr.String())
		c.ModuleName = "Test.Client"
		c.ReportInterval = time.Hour // only Close's final report
		c.EnableSet = true
		c.SetDivision = "app.sz.1"
	})
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+g.endpoint()+" -s app.sz.1", &sp); err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), &sp, "x", 1); err != nil {
		t.Fatal(err)
	}
	_ = closeComm(t, comm)

	sink.mu.Lock()
	defer sink.mu.Unlock()
	var h *statf.StatMicMsgHead
	for i := range sink.heads {
		if sink.heads[i].InterfaceName == "SayHello" {
			h = &sink.heads[i]
		}
	}
	if h == nil {
		t.Fatalf("no report of SayHello (heads %+v)", sink.heads)
	}
	want := statf.StatMicMsgHead{
		MasterName: "Test.Client.appsz1@1.0.0", SlaveName: "Test.Server.appsz1", InterfaceName: "SayHello",
		SlaveIp: h.SlaveIp, SlavePort: h.SlavePort, SlaveSetName: "app", SlaveSetArea: "sz", SlaveSetID: "1",
	}
	if h.MasterName != want.MasterName || h.SlaveName != want.SlaveName ||
		h.SlaveSetName != want.SlaveSetName || h.SlaveSetArea != want.SlaveSetArea || h.SlaveSetID != want.SlaveSetID {
		t.Errorf("stat head of a set client's call to a set endpoint:\n got masterName %q slaveName %q set %q.%q.%q\nwant masterName %q slaveName %q set %q.%q.%q (TarsCpp's)",
			h.MasterName, h.SlaveName, h.SlaveSetName, h.SlaveSetArea, h.SlaveSetID,
			want.MasterName, want.SlaveName, want.SlaveSetName, want.SlaveSetArea, want.SlaveSetID)
	}
}
