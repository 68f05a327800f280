package communicator_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// holdingGreeter is a greeter whose SayHello holds a call named "hold" until release is closed,
// so that a Stop waits for it; the others are answered at once.
func holdingGreeter(t *testing.T, id string, release <-chan struct{}) *greeter {
	t.Helper()
	return countingHolder(t, id, release, nil)
}

// refusesConnections reports whether addr no longer serves new connections: the dial fails, or
// the connection is closed before anything is sent on it.
func refusesConnections(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// beginStop starts g's Stop (20 s to finish) and waits until g refuses new connections; Stop's
// error arrives on stopped.
func beginStop(t *testing.T, g *greeter, stopped chan<- error) {
	t.Helper()
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		stopped <- g.srv.Stop(sctx)
	}()
	for deadline := time.Now().Add(10 * time.Second); !refusesConnections(g.addr); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server %s still accepts connections 10s after its Stop began", g.id)
		}
	}
}

// endStops releases the held calls (release) and checks that the n calls the stopping servers
// were running succeeded (held) and that their n Stops returned nil (stopped).
func endStops(t *testing.T, release func(), held, stopped <-chan error, n int) {
	t.Helper()
	release()
	for range n {
		if err := <-held; err != nil {
			t.Errorf("a call a stopping server was running: %v", err)
		}
		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("Stop: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Stop did not return 20s after its last call was released\n%s", allStacks())
		}
	}
}

// TestStopOneOfTwoLosesNoCall stops one of a proxy's two servers gracefully while eight callers
// keep calling through the proxy, and the Stop is held open by a call the stopping server is
// still running. Every call succeeds: the stopping server's notice takes it out of rotation, and
// the calls that reach it anyway are refused with -9 "server is stopping" (never run), which the
// client sends to the other server. Before, each such refusal was the caller's error (a *ServerError
// -9): a rolling restart failed calls on every server it stopped.
func TestStopOneOfTwoLosesNoCall(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	a := holdingGreeter(t, "a", release)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the server's Stop
	b := startGreeter(t, "b", serverOpt{})
	comm := newComm(t, nil)
	both := proxyTo(t, comm, a, b)
	onlyA := proxyTo(t, comm, a)
	ctx := testCtx(t)

	held := make(chan error, 1)
	go func() { _, err := sayHello(ctx, onlyA, "hold", 1); held <- err }()
	waitHolding(t, a, 1)
	// Warm both connections, then begin A's Stop: it waits for the held call.
	for i := range 20 {
		if _, err := sayHello(ctx, both, "warm", uint64(i)); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	stopped := make(chan error, 1)
	beginStop(t, a, stopped)

	const callers, perCaller = 8, 100
	var (
		wg     sync.WaitGroup
		failed atomic.Int64
		first  atomic.Value
		from   [2]atomic.Int64
	)
	for w := range callers {
		wg.Go(func() {
			for i := range perCaller {
				who, err := sayHello(ctx, both, "during", uint64(w*perCaller+i))
				if err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, err)
					continue
				}
				if who == "a" {
					from[0].Add(1)
				} else {
					from[1].Add(1)
				}
			}
		})
	}
	wg.Wait()
	endStops(t, func() { releaseOnce.Do(func() { close(release) }) }, held, stopped, 1)
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d calls made while one of the two servers was stopping failed; first: %v", n, callers*perCaller, first.Load())
	}
	if from[0].Load() != 0 {
		t.Fatalf("the stopping server answered %d calls that began after its Stop (want them all refused, then sent to b)", from[0].Load())
	}
	e, _ := attribEndpointStats(comm.Stats(), a.addr)
	t.Logf("calls answered by b while a was stopping: %d; refused by a as it stopped: %d", from[1].Load(), e.StopRefused)
}

// TestStopAllMovesOnce stops both of a proxy's servers (each held open by a call it runs): a
// call refused by one as it stops moves to the other once, and fails there with the second
// refusal, a -9 ServerError saying so, without going round again; a proxy with one endpoint
// fails its call at the first refusal.
func TestStopAllMovesOnce(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	a := holdingGreeter(t, "a", release)
	b := holdingGreeter(t, "b", release)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the servers' Stop
	comm := newComm(t, nil)
	both := proxyTo(t, comm, a, b)
	ctx := testCtx(t)
	held := make(chan error, 2)
	stopped := make(chan error, 2)
	for _, g := range []*greeter{a, b} {
		only := proxyTo(t, comm, g)
		go func() { _, err := sayHello(ctx, only, "hold", 1); held <- err }()
		waitHolding(t, g, 1)
	}
	for i := range 4 { // connect both
		if _, err := sayHello(ctx, both, "warm", uint64(i)); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	beginStop(t, a, stopped)
	beginStop(t, b, stopped)
	before := stopRefusals(comm, a, b)
	const n = 10
	for i := range n {
		_, err := sayHello(ctx, both, "late", uint64(i))
		var se *communicator.ServerError
		if !errors.As(err, &se) || se.Code != codec.RetOverload || se.Desc != codec.StoppingDesc {
			t.Fatalf("call %d to two stopping servers: %v, want a -9 %q ServerError", i, err, codec.StoppingDesc)
		}
	}
	if got := stopRefusals(comm, a, b) - before; got != 2*n {
		t.Fatalf("%d calls to two stopping servers were refused %d times, want %d (each moved once, then refused again)", n, got, 2*n)
	}
	onlyA := proxyTo(t, comm, a)
	if _, err := sayHello(ctx, onlyA, "late", 0); !errors.Is(err, communicator.ErrOverload) {
		t.Fatalf("call to a lone stopping server: %v, want ErrOverload", err)
	}
	endStops(t, func() { releaseOnce.Do(func() { close(release) }) }, held, stopped, 2)
}

// stopRefusals sums the calls the greeters refused as they stopped, as the client counted them.
func stopRefusals(comm *communicator.Communicator, gs ...*greeter) uint64 {
	var n uint64
	snap := comm.Stats()
	for _, g := range gs {
		e, _ := attribEndpointStats(snap, g.addr)
		n += e.StopRefused
	}
	return n
}

// TestStopOnewayGoesElsewhere sends one-way calls through a proxy with two servers while one of
// them stops. A one-way call gets no reply, so before, a client sending only one-way calls never
// learnt that the server was stopping: it went on sending half of them there, to be dropped,
// until Stop closed the connection. The stopping server now sends a notice on every connection
// as its Stop begins (a one-way -9 "server is stopping" for no call, and the same for each
// one-way request it refuses): the client takes the endpoint out of rotation, and every one-way
// call after that runs on the other server.
func TestStopOnewayGoesElsewhere(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	a := holdingGreeter(t, "a", release)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the server's Stop
	var ranB atomic.Int32
	b := startGreeter(t, "b", serverOpt{handled: &ranB})
	comm := newComm(t, nil)
	both := proxyTo(t, comm, a, b)
	onlyA := proxyTo(t, comm, a)
	ctx := testCtx(t)
	held := make(chan error, 1)
	go func() { _, err := sayHello(ctx, onlyA, "hold", 1); held <- err }()
	waitHolding(t, a, 1)
	for i := range 4 { // connect both
		if _, err := sayHello(ctx, both, "warm", uint64(i)); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	stopped := make(chan error, 1)
	beginStop(t, a, stopped)
	for deadline := time.Now().Add(10 * time.Second); endpointActive(comm, a); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a is still in rotation 10s after its Stop began: the client was not told")
		}
	}
	ran0 := ranB.Load()
	const n = 20
	for i := range n {
		if err := both.InvokeOneway(ctx, "SayHello", &hellopb.HelloRequest{Name: "oneway", Seq: uint64(i)}); err != nil {
			t.Fatalf("one-way call %d: %v", i, err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); int(ranB.Load()-ran0) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d one-way calls made after a left rotation ran on b in 10s: the rest went to the stopping a, and were lost",
				ranB.Load()-ran0, n)
		}
	}
	endStops(t, func() { releaseOnce.Do(func() { close(release) }) }, held, stopped, 1)
}

// endpointActive reports whether g's endpoint is in rotation on every net thread that has a
// connection to it (the proxies' rows in the stats).
func endpointActive(comm *communicator.Communicator, g *greeter) bool {
	for _, e := range comm.Stats().Endpoints {
		if e.Servant == servant && e.Endpoint == g.addr && !e.Active {
			return false
		}
	}
	return true
}
