package communicator_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// tgreeter is the server of the tail tests: SayHello answers "<name>@<id>", and can be told to
// fail every other call (with a framework error code) or to answer -9 (overloaded). It sits
// behind its own fault proxy, which slows it down when asked.
type tgreeter struct {
	id       string
	srv      *server.Server
	p        *faultproxy.Proxy
	calls    atomic.Int64
	failHalf atomic.Bool  // every other call fails with codec.RetUnknown
	overload atomic.Bool  // every call is answered -9
	hold     atomic.Int64 // nanoseconds each call waits before answering
}

// startTGreeter starts a tgreeter and its fault proxy on loopback; t.Cleanup stops both.
func startTGreeter(t *testing.T, id string) *tgreeter {
	t.Helper()
	g := &tgreeter{id: id}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)),
		server.WithNumEventLoop(1), server.WithWorkers(256), server.WithQueueCap(1<<16))
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		n := g.calls.Add(1)
		if d := time.Duration(g.hold.Load()); d > 0 {
			tm := time.NewTimer(d)
			stop, release := stopped(ctx, false)
			select {
			case <-tm.C:
				release()
			case <-stop:
				tm.Stop()
				return nil, ctx.Err()
			}
		}
		if g.overload.Load() {
			return nil, &server.Error{Code: codec.RetOverload, Desc: "overloaded (test)"}
		}
		if g.failHalf.Load() && n%2 == 0 {
			return nil, &server.Error{Code: codec.RetUnknown, Desc: "failing half (test)"}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start server %s: %v", id, err)
	}
	g.srv = s
	g.p = startProxy(t, a.String())
	t.Cleanup(func() {
		if err := stopServer(t, "server "+id, s); err != nil {
			t.Logf("stop server %s: %v", id, err)
		}
	})
	return g
}

func (g *tgreeter) endpoint() string { return tcpEndpoint(g.p.Addr()) }

// tailProxy binds a ServantProxy of the test servant, configured by sv, to the greeters, on a
// Communicator of its own (one net thread, so that the per-thread state is the servant's).
func tailProxy(t *testing.T, sv conf.Servant, gs ...*tgreeter) (*communicator.Communicator, *servantproxy.ServantProxy) {
	t.Helper()
	c := newComm(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: sv}
	}))
	eps := make([]string, len(gs))
	for i, g := range gs {
		eps[i] = g.endpoint()
	}
	return c, proxyToAddrs(t, c, eps...)
}

// sample is one call of a tail load.
type sample struct {
	at   time.Duration // when it ended, since the load began
	took time.Duration
	from string // the greeter that answered; "" on error
	err  error
}

// tailLoad is what a closed-loop load saw, after its warm-up.
type tailLoad struct {
	samples []sample
	span    time.Duration // measured time
	total   int           // calls made, warm-up included
}

// runTail runs callers goroutines calling SayHello back to back (timeout each) for warm+span,
// and returns the calls that ended after warm.
func runTail(t *testing.T, sp *servantproxy.ServantProxy, callers int, warm, span, timeout time.Duration) tailLoad {
	t.Helper()
	ctx := testCtx(t)
	start := time.Now()
	end := start.Add(warm + span)
	var (
		mu  sync.Mutex
		all []sample
		wg  sync.WaitGroup
		seq atomic.Uint64
	)
	for range callers {
		wg.Go(func() {
			var mine []sample
			for time.Now().Before(end) {
				t0 := time.Now()
				from, err := sayHello(ctx, sp, "tail", seq.Add(1), servantproxy.WithTimeout(timeout))
				now := time.Now()
				if at := now.Sub(start); at >= warm {
					mine = append(mine, sample{at: at - warm, took: now.Sub(t0), from: from, err: err})
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return tailLoad{samples: all, span: span, total: int(seq.Load())}
}

// quantile returns the q-quantile (0..1) of the successful calls' latency (0 with none).
func (l tailLoad) quantile(q float64) time.Duration {
	var d []time.Duration
	for _, s := range l.samples {
		if s.err == nil {
			d = append(d, s.took)
		}
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(int(q*float64(len(d))), len(d)-1)]
}

// ok returns the successful calls.
func (l tailLoad) ok() int {
	n := 0
	for _, s := range l.samples {
		if s.err == nil {
			n++
		}
	}
	return n
}

// rate returns the successful calls per second.
func (l tailLoad) rate() float64 { return float64(l.ok()) / l.span.Seconds() }

// errRate returns the share of failed calls among those that ended in [from, to).
func (l tailLoad) errRate(from, to time.Duration) (rate float64, calls int) {
	errs := 0
	for _, s := range l.samples {
		if s.at >= from && s.at < to {
			calls++
			if s.err != nil {
				errs++
			}
		}
	}
	if calls == 0 {
		return 0, 0
	}
	return float64(errs) / float64(calls), calls
}

// share returns the share of successful calls answered by greeter id.
func (l tailLoad) share(id string) float64 {
	n, ok := 0, 0
	for _, s := range l.samples {
		if s.err == nil {
			ok++
			if s.from == id {
				n++
			}
		}
	}
	if ok == 0 {
		return 0
	}
	return float64(n) / float64(ok)
}

// String is the line of numbers a scenario logs.
func (l tailLoad) String() string {
	r, n := l.errRate(0, l.span+time.Hour)
	return fmt.Sprintf("calls=%d ok/s=%.0f p50=%v p99=%v errors=%.2f%%", n, l.rate(),
		l.quantile(0.5).Round(10*time.Microsecond), l.quantile(0.99).Round(10*time.Microsecond), 100*r)
}

// firstErr returns the first error of the load, for messages.
func (l tailLoad) firstErr() error {
	for _, s := range l.samples {
		if s.err != nil {
			return s.err
		}
	}
	return nil
}
