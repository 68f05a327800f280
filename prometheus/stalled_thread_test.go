package tarsprom_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// stallCore is a zap core that, once armed, holds the goroutine that logs "connected" for
// endpoint until released. The adapter proxy logs "connected" on its net thread's loop
// (gnet's OnOpen), so this stalls exactly one net thread's loop: the test's stand-in for a
// loop that a busy machine (CPU starvation, a long GC assist) keeps from running for a second.
type stallCore struct {
	fields []zapcore.Field
	g      *stallGate
}

type stallGate struct {
	endpoint string
	mu       sync.Mutex
	armed    bool
	entered  chan struct{} // closed when a loop is held
	release  chan struct{}
	once     sync.Once
}

func (c *stallCore) Enabled(zapcore.Level) bool { return true }
func (c *stallCore) With(f []zapcore.Field) zapcore.Core {
	return &stallCore{fields: append(append([]zapcore.Field(nil), c.fields...), f...), g: c.g}
}
func (c *stallCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}
func (c *stallCore) Sync() error { return nil }
func (c *stallCore) Write(e zapcore.Entry, f []zapcore.Field) error {
	if e.Message != "connected" {
		return nil
	}
	hit := false
	for _, x := range append(append([]zapcore.Field(nil), c.fields...), f...) {
		if x.Key == "endpoint" && x.String == c.g.endpoint {
			hit = true
		}
	}
	c.g.mu.Lock()
	armed := c.g.armed
	c.g.mu.Unlock()
	if !hit || !armed {
		return nil
	}
	c.g.once.Do(func() { close(c.g.entered) })
	select {
	case <-c.g.release:
	case <-time.After(30 * time.Second):
	}
	return nil
}

// TestCounterHoldsWhileThreadStalled: the client collector over comm.Stats sends
// tarscomm_client_calls_total summed over the net threads; while one thread's loop does not
// answer (Communicator.Stats leaves it out after a second), a scrape shows the last snapshot
// that held every thread, so no counter goes down. Before (found by the flake hunt), the
// collector passed the partial snapshot on: a counter dropped by that thread's share while the
// Communicator was open, which Prometheus reads as a counter reset (rate() and increase() then
// count the whole counter again), and TestScrapeDuringTrafficAndClose was a latent flake on a
// busy machine.
func TestCounterHoldsWhileThreadStalled(t *testing.T) {
	addrA, addrB := startLive(t), startLive(t)
	gate := &stallGate{endpoint: addrB, entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-gate.release:
		default:
			close(gate.release)
		}
	})
	cfg := conf.Default()
	cfg.NetThread = 2
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.New(&stallCore{g: gate})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	proxyTo := func(addr string) *servantproxy.ServantProxy {
		host, port, _ := net.SplitHostPort(addr)
		var sp servantproxy.ServantProxy
		if err := comm.StringToProxy(liveObj+"@tcp -h "+host+" -p "+port, &sp); err != nil {
			t.Fatal(err)
		}
		return &sp
	}
	spA, spB := proxyTo(addrA), proxyTo(addrB)

	ctx, cancel := context.WithTimeout(context.Background(), liveBound)
	defer cancel()
	// Ten calls on each net thread (WithHash picks the thread), all answered by A.
	const perThread = 10
	for i := range 2 * perThread {
		if _, err := spA.InvokeRaw(ctx, "Echo", []byte("x"), servantproxy.WithHash(uint64(i%2))); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	okCalls := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "tarscomm_client_calls_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				if l := labels(m); l["result"] == "ok" && l["endpoint"] == addrA {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	before := okCalls()
	if before != 2*perThread {
		t.Fatalf("first scrape: calls_total{endpoint=%s,result=ok} = %v, want %d", addrA, before, 2*perThread)
	}

	// Net thread 1's loop is held (for longer than Stats waits for it) while it opens a
	// connection to B; the Communicator stays open.
	gate.mu.Lock()
	gate.armed = true
	gate.mu.Unlock()
	callDone := make(chan error, 1)
	go func() {
		_, err := spB.InvokeRaw(ctx, "Echo", []byte("y"), servantproxy.WithHash(1))
		callDone <- err
	}()
	select {
	case <-gate.entered:
	case <-time.After(liveBound):
		t.Fatal("net thread 1 never opened its connection to B")
	}
	after := okCalls()
	close(gate.release)
	if err := <-callDone; err != nil {
		t.Errorf("the call to B once its thread ran again: %v", err)
	}
	final := okCalls()
	t.Logf("calls_total{endpoint=A,result=ok}: %v, then %v while net thread 1 was stalled, then %v", before, after, final)
	if after < before {
		t.Errorf("calls_total{endpoint=%s,result=ok} went down from %v to %v between two scrapes while the Communicator was open (a net thread's loop was late by more than a second): Prometheus reads it as a counter reset",
			addrA, before, after)
	}
}
