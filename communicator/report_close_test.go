package communicator_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/protocol/propertyf"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/report/property"
	"github.com/tarscomm/tarscomm/server"
)

// hangingStat is a StatF servant that holds this process's reports until the client's deadline
// ends them (the handler's ctx), as a stat service that does not answer.
type hangingStat struct {
	in    chan struct{} // a report arrived
	ended atomic.Bool   // a report's deadline passed at the server
}

func (s *hangingStat) ReportMicMsg(ctx context.Context, cur *server.Current, _ map[statf.StatMicMsgHead]statf.StatMicMsgBody, _ bool) (int32, error) {
	if !ownCaller(cur) {
		return 0, nil
	}
	select {
	case s.in <- struct{}{}:
	default:
	}
	<-ctx.Done()
	s.ended.Store(true)
	return 0, ctx.Err()
}

func (s *hangingStat) ReportSampleMsg(context.Context, *server.Current, []statf.StatSampleMsg) (int32, error) {
	return 0, nil
}

// propArrival is a PropertyF servant that records, for this process's report, whether the stat
// report's deadline had passed when it arrived.
type propArrival struct {
	stat    *hangingStat
	arrived chan bool // the stat report had ended, when the property report came
}

func (p *propArrival) ReportPropMsg(_ context.Context, cur *server.Current, _ map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody) (int32, error) {
	if ownCaller(cur) {
		select {
		case p.arrived <- p.stat.ended.Load():
		default:
		}
	}
	return 0, nil
}

// TestReportCloseSendsFinalReportsTogether: Close sends its final stat and property reports
// together, so that a stat service that does not answer holds Close for one report timeout, not
// for that and the property report's. Here the stat service holds the report until its
// deadline: the property report reaches its service while the stat report is still held. Before,
// Close sent the property report only once the stat report had given up (5 s later), and Close
// took the sum of both services' timeouts.
func TestReportCloseSendsFinalReportsTogether(t *testing.T) {
	stat := &hangingStat{in: make(chan struct{}, 1)}
	prop := &propArrival{stat: stat, arrived: make(chan bool, 1)}
	srv := server.New(server.WithWorkers(4))
	const propObj = "tars.tarsproperty.PropertyObj"
	if err := statf.RegisterStatF(srv, statServant, stat); err != nil {
		t.Fatal(err)
	}
	if err := propertyf.RegisterPropertyF(srv, propObj, prop); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "report server", srv) })

	name := fmt.Sprintf("close.together.%d", time.Now().UnixNano()) // property.Default is process-wide
	property.New(name, property.Count()).Report(1)
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) {
		c.Stat = statServant + "@" + tcpEndpoint(addr.String())
		c.Property = propObj + "@" + tcpEndpoint(addr.String())
		c.ModuleName = "Test.Client"
		c.ReportInterval = time.Hour // only Close's final reports
	})
	if _, err := sayHello(testCtx(t), proxyTo(t, comm, g), "x", 1); err != nil { // something to report
		t.Fatal(err)
	}
	_ = closeComm(t, comm)
	select {
	case <-stat.in:
	default:
		t.Fatal("the final stat report did not reach the stat service")
	}
	select {
	case statEnded := <-prop.arrived:
		if statEnded {
			t.Fatal("the final property report was sent only after the final stat report had given up: Close waited for one, then the other")
		}
	default:
		t.Fatal("the final property report did not reach the property service")
	}
}
