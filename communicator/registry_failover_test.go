package communicator_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// regPair is two registry instances of one TARS deployment (QueryF served by the project's
// server). The first of them to be asked becomes the sick one, whichever that is, for the rest
// of the test: it answers as mode says, while the other answers the servant's endpoints. That
// makes the test independent of which locator endpoint the client happens to ask first.
type regPair struct {
	mode    string // "error": return code -1; "hang": no answer (pings still answered); "empty": 0, no endpoint
	good    []endpointf.EndpointF
	sick    atomic.Int32 // id of the sick registry, 0 until the first query
	release chan struct{}
	once    sync.Once
}

type pairReg struct {
	queryf.UnimplementedQueryFServer
	id    int32
	p     *regPair
	addr  string
	asked atomic.Int32
}

func (r *pairReg) FindObjectByIdInSameGroup(ctx context.Context, cur *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	if !ownCaller(cur) {
		return 0, nil, nil, nil
	}
	r.asked.Add(1)
	r.p.sick.CompareAndSwap(0, r.id)
	if r.p.sick.Load() != r.id {
		return 0, r.p.good, []endpointf.EndpointF{}, nil
	}
	switch r.p.mode {
	case "hang":
		<-r.p.release
		return -1, nil, nil, nil
	case "empty":
		return 0, []endpointf.EndpointF{}, []endpointf.EndpointF{}, nil
	default:
		return -1, nil, nil, nil
	}
}

func startRegPair(t *testing.T, mode string, g *greeter) (*regPair, [2]*pairReg, string) {
	t.Helper()
	ep, err := endpoint.ParseEndpoint(g.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	p := &regPair{mode: mode, good: []endpointf.EndpointF{registry.ToEndpointF(ep)}, release: make(chan struct{})}
	var regs [2]*pairReg
	locator := "tars.tarsregistry.QueryObj@"
	for i := range regs {
		r := &pairReg{id: int32(i + 1), p: p}
		s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("registry")), server.WithNumEventLoop(1), server.WithWorkers(8))
		if err := queryf.RegisterQueryF(s, "tars.tarsregistry.QueryObj", r); err != nil {
			t.Fatal(err)
		}
		a, err := s.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r.addr = a.String()
		t.Cleanup(func() { _ = stopServer(t, "registry", s) })
		host, port, _ := net.SplitHostPort(r.addr)
		if i > 0 {
			locator += ":"
		}
		locator += "tcp -h " + host + " -p " + port
		regs[i] = r
	}
	// Runs before the servers' Stop (cleanups run last-in first-out): a hung handler returns.
	t.Cleanup(func() { p.once.Do(func() { close(p.release) }) })
	return p, regs, locator
}

// pairProxy returns a proxy to servant, resolved through a locator listing the two registries
// of startRegPair (mode the sick one's), refreshed every second.
func pairProxy(t *testing.T, mode string, syncTimeout time.Duration) (*servantproxy.ServantProxy, [2]*pairReg) {
	t.Helper()
	a := startGreeter(t, "a", serverOpt{})
	_, regs, locator := startRegPair(t, mode, a)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 2
		c.Locator = locator
		c.RefreshEndpointInterval = time.Second
		c.SyncInvokeTimeout = syncTimeout
	})
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	return sp, regs
}

// TestRegistryFailoverOnBrokenAnswer: the locator lists two registries; the other answers the
// servant's endpoint, and one
//   - error: answers every query with a non-zero return code (a registry instance that cannot
//     serve the query, e.g. its database is down): TarsCpp's QueryEpBase asks through its QueryF
//     proxy's ordinary round robin, so its retry 2s later reaches the other registry;
//   - hang: accepts queries and never answers them (its handler is stuck; its server still
//     answers tars_ping): the query times out (5s), and TarsCpp's next one (at 7s) goes to the
//     other registry.
//
// Before, every query of the servant was hashed to the same locator endpoint, and a reply with
// a return code leaves that endpoint healthy (a hung one was back in rotation after a ping
// before the next query): all queries went to the broken registry (4 failures, then one every
// 30s) and the servant never resolved although a working registry was listed.
func TestRegistryFailoverOnBrokenAnswer(t *testing.T) {
	for _, tt := range []struct {
		mode, what string
		within     time.Duration
	}{
		{"error", "answering -1", 12 * time.Second},
		{"hang", "never answering queries", 16 * time.Second},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			sp, regs := pairProxy(t, tt.mode, 30*time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), tt.within)
			defer cancel()
			from, err := sayHello(ctx, sp, tt.mode, 1)
			if err != nil || from != "a" {
				t.Fatalf("locator [two registries, one %s]: call with a %v deadline got from %q, err %v; "+
					"registry queries seen: #1 %d, #2 %d; want the servant resolved through the other registry",
					tt.what, tt.within, from, err, regs[0].asked.Load(), regs[1].asked.Load())
			}
		})
	}
}

// TestRegistryFailoverOnEmptyAnswer: the locator lists two registries; one answers the
// servant with an empty active list (an instance whose view of the deployment is stale or not
// loaded yet), the other with its endpoint. TarsCpp applies no empty list and asks again 10s later
// through its QueryF proxy's round robin, i.e. the other registry, and the servant resolves.
// Here the empty list is applied (calls fail with ErrNoEndpoint at once); before, every later
// query, every 10s, was hashed to the same registry and the servant never resolved.
func TestRegistryFailoverOnEmptyAnswer(t *testing.T) {
	sp, regs := pairProxy(t, "empty", 3*time.Second)
	var (
		from string
		err  error
	)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if from, err = sayHello(context.Background(), sp, "e", 1); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("locator [two registries, one answering an empty list]: calls for 15s, last got from %q, err %v; "+
		"registry queries seen: #1 %d, #2 %d; want the servant resolved through the other registry "+
		"(TarsCpp's next query, 10s later, goes to the other locator endpoint)",
		from, err, regs[0].asked.Load(), regs[1].asked.Load())
}
