package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// countingHolder is a greeter whose SayHello holds a call named "hold" until release is closed,
// so that a Stop waits for it (g.holding counts the calls held: waitHolding), and counts this process's "during" calls in run (when not nil),
// so that a test can tell how many of the calls it made ran somewhere.
func countingHolder(t *testing.T, id string, release <-chan struct{}, run *atomic.Int64, opts ...server.Option) *greeter {
	t.Helper()
	endToEnd(t)
	s := server.New(append([]server.Option{server.WithLogger(zaptest.NewLogger(t).Named("server-" + id)), server.WithNumEventLoop(1), server.WithWorkers(8)}, opts...)...)
	g := &greeter{id: id, srv: s, release: make(chan struct{})}
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if req.GetName() == "hold" {
			g.holding.Add(1)
			<-release
		}
		if run != nil && req.GetName() == "during" && ownCaller(cur) {
			run.Add(1)
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = a.String()
	t.Cleanup(func() {
		if err := stopServer(t, "server "+id, s); err != nil {
			t.Logf("stop server %s: %v", id, err)
		}
	})
	return g
}

// TestStopCallsThroughStopEnd: callers keep calling a proxy to two servers while one of them
// stops gracefully, across the whole Stop: its start, the seconds it waits for a call it runs,
// its end (the server closes its connections) and the second after it (the port refuses dials).
// No call fails. Before, the client kept the stopping endpoint off for a second after a refusal
// only: its health probes, answered by the stopping server, brought it back, and once the server
// was gone a call dialled it and failed with a refused connect (unrun, but not retried with
// retries = 0). The client now takes the endpoint out of rotation on the server's notice and on
// every refusal, and a stopping server refuses the probes' tars_ping too.
func TestStopCallsThroughStopEnd(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	var runA, runB atomic.Int64
	a := countingHolder(t, "a", release, &runA)
	b := countingHolder(t, "b", release, &runB)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	comm := newComm(t, nil)
	both := proxyTo(t, comm, a, b)
	onlyA := proxyTo(t, comm, a)
	ctx := testCtx(t)
	held := make(chan error, 1)
	go func() {
		_, err := sayHello(ctx, onlyA, "hold", 1, servantproxy.WithTimeout(25*time.Second))
		held <- err
	}()
	waitHolding(t, a, 1)
	for i := range 20 {
		if _, err := sayHello(ctx, both, "warm", uint64(i)); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	began := time.Now()
	stopCallers := startCallers(began, func(w, i int) error {
		_, err := sayHello(ctx, both, "during", uint64(w*1_000_000+i))
		return err
	})
	stopped := make(chan error, 1)
	beginStop(t, a, stopped)
	refusedAtStop := stopRefusals(comm, a)
	time.Sleep(1500 * time.Millisecond) // the calls meet the stopping server's notice, refusals and probes
	refusedAtRelease := stopRefusals(comm, a)
	endStops(t, func() { releaseOnce.Do(func() { close(release) }) }, held, stopped, 1)
	t.Logf("a's Stop ended %v after it began; stop_refused: %d when it began, %d at release", time.Since(began).Round(time.Millisecond), refusedAtStop, refusedAtRelease)
	time.Sleep(1500 * time.Millisecond) // a is down now
	calls, failed, errs := stopCallers()
	if failed > 0 {
		t.Fatalf("%d of %d calls made across one of two servers' graceful Stop failed; first: %v", failed, calls, errs)
	}
	t.Logf("%d calls, stop_refused %d", calls, stopRefusals(comm, a))
}

// startCallers starts four callers that call call(w, i) (w the caller, i its call) every
// millisecond until the returned stop is called, which waits for them and returns the calls
// made, those that failed and the first few errors, each with its time since began.
func startCallers(began time.Time, call func(w, i int) error) (stop func() (calls, failed int64, first []error)) {
	var (
		wg   sync.WaitGroup
		done atomic.Bool
		n, f atomic.Int64
		mu   sync.Mutex
		errs []error
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !done.Load(); i++ {
				n.Add(1)
				if err := call(w, i); err != nil {
					f.Add(1)
					mu.Lock()
					if len(errs) < 5 {
						errs = append(errs, fmt.Errorf("at %v after the Stop began: %w", time.Since(began).Round(time.Millisecond), err))
					}
					mu.Unlock()
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	return func() (int64, int64, []error) {
		done.Store(true)
		wg.Wait()
		return n.Load(), f.Load(), errs
	}
}

// TestStopLoneRefusalIsAServerReply: a proxy whose one endpoint is stopping gets its call
// refused with -9 "server is stopping", a *ServerError; the interceptor's CallInfo.Ret is -9 and
// the stats count a server_error with code -9, as for any -9 reply. Before, a refusal the client
// could not move elsewhere ended as an error wrapping the ServerError: the interceptor saw Ret 0
// and the stats counted an "overload" (max-inflight reached, not sent) with no code.
func TestStopLoneRefusalIsAServerReply(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	var runA atomic.Int64
	a := countingHolder(t, "a", release, &runA)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var (
		mu    sync.Mutex
		infos []interceptor.CallInfo
	)
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.OnEnd(func(i *interceptor.CallInfo) {
			mu.Lock()
			infos = append(infos, interceptor.CallInfo{Function: i.Function, Endpoint: i.Endpoint, Ret: i.Ret, Err: i.Err})
			mu.Unlock()
		})
		return next(ctx, info)
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
	onlyA := proxyTo(t, comm, a)
	ctx := testCtx(t)
	held := make(chan error, 1)
	go func() {
		_, err := sayHello(ctx, onlyA, "hold", 1, servantproxy.WithTimeout(25*time.Second))
		held <- err
	}()
	waitHolding(t, a, 1)
	if _, err := sayHello(ctx, onlyA, "warm", 1); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	beginStop(t, a, stopped)
	_, err := sayHello(ctx, onlyA, "during", 1)
	var se *communicator.ServerError
	if !errors.As(err, &se) || se.Code != codec.RetOverload {
		t.Fatalf("call to a lone stopping server: %v, want a -9 ServerError", err)
	}
	var c stats.Counters
	for _, x := range comm.Stats().Calls {
		if x.Key.Servant == servant && x.Key.Function == "SayHello" {
			c.Results[stats.ServerError] += x.Counters.Results[stats.ServerError]
			c.Results[stats.Overload] += x.Counters.Results[stats.Overload]
			c.Codes = append(c.Codes, x.Counters.Codes...)
		}
	}
	endStops(t, func() { releaseOnce.Do(func() { close(release) }) }, held, stopped, 1)
	mu.Lock()
	var last interceptor.CallInfo
	for _, i := range infos {
		if i.Err != nil {
			last = i
		}
	}
	mu.Unlock()
	var problems []string
	if last.Ret != codec.RetOverload {
		problems = append(problems, fmt.Sprintf("interceptor saw Ret %d Endpoint %q Err %v, want Ret -9 for the -9 reply", last.Ret, last.Endpoint, last.Err))
	}
	if c.Results[stats.ServerError] != 1 || c.Results[stats.Overload] != 0 {
		problems = append(problems, fmt.Sprintf("stats count the -9 reply as server_error %d (codes %v), overload %d; want server_error 1 with code -9, overload 0",
			c.Results[stats.ServerError], c.Codes, c.Results[stats.Overload]))
	}
	if len(problems) > 0 {
		t.Fatal(strings.Join(problems, "; "))
	}
}

// TestStopServesConnectionAcceptedBefore: an inline-mode server (no workers) whose one event
// loop runs a long handler when a client connects: the accept loop accepts the connection, whose
// enrolling waits for the busy loop, and the client writes its calls on it; the server's Stop
// begins meanwhile. The calls move to the other server. Before, the loop's OnOpen saw the server
// stopping and closed the connection without reading it, so the calls failed with a connection
// error (and a misleading TLS hint) though they never ran; such a connection is served now, its
// requests refused with -9 "server is stopping", which the client moves.
func TestStopServesConnectionAcceptedBefore(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	var runA, runB atomic.Int64
	endToEnd(t)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-a")), server.WithNumEventLoop(1))
	a := &greeter{id: "a", srv: s}
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if req.GetName() == "hold" {
			a.holding.Add(1)
			<-release
		}
		if req.GetName() == "during" && ownCaller(cur) {
			runA.Add(1)
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@a", Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = addr.String()
	t.Cleanup(func() {
		releaseOnce.Do(func() { close(release) })
		if err := stopServer(t, "server a", s); err != nil {
			t.Logf("stop server a: %v", err)
		}
	})
	b := countingHolder(t, "b", release, &runB)
	ctx := testCtx(t)
	onlyA := proxyTo(t, newComm(t, nil), a)
	if _, err := sayHello(ctx, onlyA, "warm", 1); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := sayHello(ctx, onlyA, "hold", 1, servantproxy.WithTimeout(25*time.Second))
		held <- err
	}()
	waitHolding(t, a, 1) // a's only loop runs the held call

	both := proxyTo(t, newComm(t, nil), a, b)
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := sayHello(ctx, both, "during", uint64(i), servantproxy.WithTimeout(20*time.Second))
			errs <- err
		}()
	}
	time.Sleep(300 * time.Millisecond) // the calls routed to a are written on a connection a accepted
	stopped := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		stopped <- s.Stop(sctx)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", a.addr, time.Second)
		if err != nil {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("a still accepts 10s after its Stop began")
		}
	}
	time.Sleep(500 * time.Millisecond) // the connection is not reset by the listener's close
	releaseOnce.Do(func() { close(release) })
	if err := <-held; err != nil {
		t.Errorf("the held call: %v", err)
	}
	var failed []error
	for range n {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if err := <-stopped; err != nil {
		t.Errorf("a's Stop: %v", err)
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d calls failed (ran: a %d, b %d) while one of two servers stopped; first: %v", len(failed), n, runA.Load(), runB.Load(), failed[0])
	}
}

// waitHolding waits until g's handler holds n calls: a Stop begun before a held call reached the
// server would refuse it (-9) instead of waiting for it.
func waitHolding(t *testing.T, g *greeter, n int32) {
	t.Helper()
	for deadline := time.Now().Add(live); g.holding.Load() < n; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server %s holds %d calls %v after they were made, want %d\n%s", g.id, g.holding.Load(), live, n, allStacks())
		}
	}
}
