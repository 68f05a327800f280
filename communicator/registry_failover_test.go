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

// TestRegistryFailoverOnErrorAnswer: the locator lists two registries; one answers every
// query with a non-zero return code (a registry instance that cannot serve the query, e.g. its
// database is down), the other answers the servant's endpoint. TarsCpp's QueryEpBase asks
// through its QueryF proxy's ordinary round robin, so its retry 2s later reaches the other
// registry and the servant resolves. Before, every query of the servant was hashed to the same
// locator endpoint, and a reply with a return code leaves that endpoint healthy, so all retries
// went to the broken registry: 4 failures in 6s, then one query every 30s, and the servant never
// resolved although a working registry was listed.
func TestRegistryFailoverOnErrorAnswer(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	_, regs, locator := startRegPair(t, "error", a)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 2
		c.Locator = locator
		c.RefreshEndpointInterval = time.Second
		c.SyncInvokeTimeout = 30 * time.Second
	})
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	from, err := sayHello(ctx, sp, "f", 1)
	if err != nil || from != "a" {
		t.Fatalf("locator [two registries, one answering -1]: call with a 12s deadline got from %q, err %v; "+
			"registry queries seen: #1 %d, #2 %d; want the servant resolved through the working registry "+
			"(TarsCpp's next query, 2s later, goes to the other locator endpoint)",
			from, err, regs[0].asked.Load(), regs[1].asked.Load())
	}
}

// TestRegistryFailoverOnHungQuery: the locator lists two registries; one accepts queries and
// never answers them (its handler is stuck; its server still answers tars_ping), the other
// answers at once. A query to the stuck one times out (5s) and takes it out of rotation, but the
// health probe (a ping) brings it back before the next query 2s later, which before was hashed
// to it again: every query went to the stuck registry, and the servant never resolved. TarsCpp's
// round robin asks the other registry on its next query (at 7s); so does tarscomm now.
func TestRegistryFailoverOnHungQuery(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	_, regs, locator := startRegPair(t, "hang", a)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 2
		c.Locator = locator
		c.RefreshEndpointInterval = time.Second
		c.SyncInvokeTimeout = 30 * time.Second
	})
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 16*time.Second)
	defer cancel()
	from, err := sayHello(ctx, sp, "h", 1)
	if err != nil || from != "a" {
		t.Fatalf("locator [two registries, one never answering queries]: call with a 16s deadline got from %q, err %v; "+
			"registry queries seen: #1 %d, #2 %d; want the servant resolved through the answering registry "+
			"(TarsCpp's next query, at 7s, goes to the other locator endpoint)",
			from, err, regs[0].asked.Load(), regs[1].asked.Load())
	}
}

// TestRegistryFailoverOnEmptyAnswer: the locator lists two registries; one answers the
// servant with an empty active list (an instance whose view of the deployment is stale or not
// loaded yet), the other with its endpoint. TarsCpp applies no empty list and asks again 10s later
// through its QueryF proxy's round robin, i.e. the other registry, and the servant resolves.
// Here the empty list is applied (calls fail with ErrNoEndpoint at once); before, every later
// query, every 10s, was hashed to the same registry and the servant never resolved.
func TestRegistryFailoverOnEmptyAnswer(t *testing.T) {
	a := startGreeter(t, "a", serverOpt{})
	_, regs, locator := startRegPair(t, "empty", a)
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread = 2
		c.Locator = locator
		c.RefreshEndpointInterval = time.Second
		c.SyncInvokeTimeout = 3 * time.Second
	})
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	var from string
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
