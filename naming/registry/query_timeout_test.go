package registry_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/server"
)

// slowQuery is QueryF on loopback answering every query with active endpoint port after delay.
type slowQuery struct {
	queryf.UnimplementedQueryFServer
	delay time.Duration
	port  int32
}

func (s slowQuery) FindObjectByIdInSameGroup(ctx context.Context, _ *server.Current, _ string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
	}
	return 0, []endpointf.EndpointF{tcp(s.port)}, nil, nil
}

// TestQueryTimeoutIsFiveSeconds: a query fails when there is no answer within QueryTimeout (5s by
// default, as TarsCpp's schedule). A registry that answers every query in 3.5s (a loaded
// registry of a big deployment) is within it, and the watch gets its list. The query used to be
// ended by the QueryF proxy's sync-invoke-timeout (3s by default) first, so every query failed
// and was retried on the failure schedule, for ever.
func TestQueryTimeoutIsFiveSeconds(t *testing.T) {
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("registry")), server.WithNumEventLoop(1), server.WithWorkers(4))
	if err := queryf.RegisterQueryF(s, "tars.tarsregistry.QueryObj", slowQuery{delay: 3500 * time.Millisecond, port: 9}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	host, port, _ := net.SplitHostPort(a.String())
	locator := "tars.tarsregistry.QueryObj@tcp -h " + host + " -p " + port
	r := registry.New(queryProxy(t, locator), registry.Options{Log: zaptest.NewLogger(t)}) // QueryTimeout: 5s
	ev := newEvents()
	stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
	defer stop()
	got, errs := ev.waitFor(t, 1)
	if got[0] != "push tcp:9" {
		t.Fatalf("a registry answering in 3.5s (QueryTimeout 5s): first event %q (%v), want the list pushed", got[0], errs)
	}
}
