package tarsprom_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestClientAndServerCollectorsShareARegistry: a relay is a server and a client at once and
// registers both collectors the way the docs show them, NewCollector(comm.Stats, Options{}) and
// NewCollector(srv.Stats, Options{Side: "server"}). The server's has only the call metrics: both
// described the same tarscomm_netthread_* and tarscomm_endpoint_* descriptors, and the registry
// refused the second one (MustRegister panicked).
func TestClientAndServerCollectorsShareARegistry(t *testing.T) {
	srv := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithNumEventLoop(1), server.WithStats())
	if err := srv.Handle(liveObj, "Echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	comm, err := communicator.New(conf.Default(), communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	host, port, _ := net.SplitHostPort(a.String())
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(fmt.Sprintf("%s@tcp -h %s -p %s", liveObj, host, port), &sp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveBound)
	defer cancel()
	if _, err := sp.InvokeRaw(ctx, "Echo", []byte("x")); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	if err := reg.Register(tarsprom.NewCollector(comm.Stats, tarsprom.Options{})); err != nil {
		t.Fatalf("client collector: %v", err)
	}
	if err := reg.Register(tarsprom.NewCollector(srv.Stats, tarsprom.Options{Side: "server"})); err != nil {
		t.Errorf("server collector next to the client one: %v", err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("Gather: %v", err)
	}
}
