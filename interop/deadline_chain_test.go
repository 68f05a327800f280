package interop_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestTimeoutDeliveryThroughTarscomm: a TarsGo client calls a tarscomm relay with a 1.5 s timeout;
// the relay's handler asks a TarsGo server's Inspect, through a proxy whose own timeout is a
// minute, with the handler's ctx. TarsGo's servant must see what is left of the 1.5 s, as iTimeout
// and as its context's deadline: TARS timeout delivery across TarsGo → tarscomm → TarsGo.
func TestTimeoutDeliveryThroughTarscomm(t *testing.T) {
	down := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	const relayObj = "Interop.TarscommServer.RelayObj"
	s := server.New(server.WithWorkers(4), server.WithLogger(zaptest.NewLogger(t).Named("relay")))
	err := server.HandleProto(s, relayObj, "Inspect", func(ctx context.Context, _ *server.Current, req *echopb.InspectReq) (*echopb.InspectRsp, error) {
		return down.Inspect(ctx, req, servantproxy.WithTimeout(time.Minute))
	})
	if err != nil {
		t.Fatal(err)
	}
	port := serve(t, s, "127.0.0.1:0", "relay")

	res := runTarsGoClient(t, job.Job{Proxy: relayObj + "@" + endpointString(port), Op: job.OpInspect, TimeoutMs: 1500})
	c := res.Calls[0]
	if c.Err != "" {
		t.Fatalf("Inspect through the relay: %s", c.Err)
	}
	var rsp echopb.InspectRsp
	if err := proto.Unmarshal(c.Body, &rsp); err != nil {
		t.Fatal(err)
	}
	if rsp.GetServant() != tarsgoPbObj {
		t.Fatalf("the reply is %s's view, want TarsGo's %s", rsp.GetServant(), tarsgoPbObj)
	}
	if ms := rsp.GetTimeoutMs(); ms <= 0 || ms > 1500 {
		t.Errorf("TarsGo's servant saw iTimeout %d ms, want 1..1500 (what was left of the TarsGo client's 1.5 s, not the relay's minute)", ms)
	}
	if ms := rsp.GetDeadlineMs(); ms <= 0 || ms > 1500 {
		t.Errorf("TarsGo's servant context had %d ms left, want 1..1500", ms)
	}
}
