package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// The edge tests of issue 9 (items 2, 3 and 4). Connects that hang use faultproxy.ListenStalled
// (a listener whose accept queue is full, so the kernel drops SYNs: works on Linux loopback
// without root) or faultproxy.ListenHeld (the same, released later so the hanging connect
// completes at its SYN retransmission).

// startHeld returns an address whose connects hang until Release, then reach upstream.
func startHeld(t *testing.T, upstream string) *faultproxy.Held {
	t.Helper()
	h, err := faultproxy.ListenHeld(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// TestBacklogQueueFullWhileConnecting queues 1 KiB async calls on an endpoint whose connect
// hangs, with send-buffer-limit 64 KiB: the calls beyond the limit must fail at once with
// ErrQueueFull, as they would on a connected endpoint whose server does not read, instead of
// waiting for the connect timeout.
func TestBacklogQueueFullWhileConnecting(t *testing.T) {
	const (
		limit   = 64 << 10
		size    = 1 << 10
		calls   = 400
		connect = 4 * time.Second
	)
	st := startStalled(t)
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.SendBufferLimit = limit
		c.ConnectTimeout = connect
		c.AsyncQueueCap = 2 * calls
	}))
	sp := proxyToAddrs(t, comm, tcpEndpoint(st.Addr()))
	ctx := context.Background()
	name := strings.Repeat("q", size)
	// "At once" is judged by order, not by the clock: a refusal counts as fast if it came before
	// the hanging connect failed (which ends the queued calls with ErrConnection).
	var fast, queueFull, other atomic.Int64
	var connectEnded atomic.Bool
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			defer wg.Done()
			if errors.Is(err, communicator.ErrQueueFull) {
				queueFull.Add(1)
				if !connectEnded.Load() {
					fast.Add(1)
				}
				return
			}
			connectEnded.Store(true)
			if !isOneOf(err, communicator.ErrConnection, communicator.ErrTimeout) {
				other.Add(1)
				t.Errorf("call queued on a hanging connect: err = %v", err)
			}
		}, servantproxy.WithTimeout(2*connect))
		if errors.Is(err, communicator.ErrQueueFull) {
			wg.Done()
			queueFull.Add(1)
			fast.Add(1)
			continue
		}
		if err != nil {
			wg.Done()
			t.Fatalf("AsyncInvoke %d: %v", i, err)
		}
	}
	wg.Wait()
	// At most limit/size calls fit; allow a few for the frame headers being counted or not.
	wantFull := int64(calls - limit/size - 8)
	t.Logf("%d of %d 1 KiB calls queued on a hanging connect refused with ErrQueueFull, %d of them before the connect failed", queueFull.Load(), calls, fast.Load())
	if fast.Load() < wantFull {
		t.Errorf("%d calls beyond send-buffer-limit %d failed at once with ErrQueueFull while the endpoint was connecting, want at least %d", fast.Load(), limit, wantFull)
	}
}

// TestBacklogExpiryNotQuadratic queues 50k async calls on an endpoint whose connect hangs for
// longer than their timeout: every one must end with ErrTimeout, and (a timing target, checked
// by make test-timing) within its deadline plus a few check intervals. Expiring a queued call
// must be O(1); a linear removal per expiry holds the loop for seconds at this size. The test
// counts late calls rather than timing the loop. The connect hangs for a minute (the test's
// liveness bound): under -race on a loaded machine, queueing the 50k calls once took longer
// than the 10 s connect timeout this test had, and the calls queued last then failed with the
// connect instead of expiring.
func TestBacklogExpiryNotQuadratic(t *testing.T) {
	const (
		calls     = 50000
		timeout   = 500 * time.Millisecond
		lateBound = 4*tick + slack // deadline + a few check intervals, with scheduling slack
	)
	st := startStalled(t)
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.ConnectTimeout = time.Minute
		c.AsyncQueueCap = 2 * calls
		c.QueueCap = 2 * calls
	}))
	sp := proxyToAddrs(t, comm, tcpEndpoint(st.Addr()))
	ctx := context.Background()
	req := &hellopb.HelloRequest{Name: "backlog"}
	late := time.Duration(lateBound)
	var lateCalls, wrong atomic.Int64
	var worst atomic.Int64
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		due := time.Now().Add(timeout)
		err := sp.AsyncInvoke(ctx, "SayHello", req, new(hellopb.HelloReply), func(err error) {
			defer wg.Done()
			over := time.Since(due)
			for {
				w := worst.Load()
				if int64(over) <= w || worst.CompareAndSwap(w, int64(over)) {
					break
				}
			}
			if over > late {
				lateCalls.Add(1)
			}
			if !errors.Is(err, communicator.ErrTimeout) {
				if wrong.Add(1) <= 3 {
					t.Errorf("queued call: err = %v, want ErrTimeout", err)
				}
			}
		}, servantproxy.WithTimeout(timeout))
		if err != nil {
			wg.Done()
			t.Fatalf("AsyncInvoke %d: %v", i, err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("queued calls still running a minute later")
	}
	// The outcome: every queued call ended with ErrTimeout (above). How late is the timing
	// property (a linear removal per expiry made them 7-11 s late under -race): a figure, checked
	// by make test-timing without -race.
	worstLate := time.Duration(worst.Load())
	timingFigure(t, lateCalls.Load() == 0, worstLate > 5*late,
		"%d of %d calls queued on a hanging connect ended more than %v after their deadline; the latest %v after it (target none)", lateCalls.Load(), calls, late, worstLate)
}

// TestIdleCloseIsNotFailedConnect makes only one-way calls (so no reply ever proves the
// connection) and then has the far side close the idle connection, with a FIN (a server's idle
// timeout) or a reset. The next one-way call must reconnect at once and succeed, and the endpoint
// must stay in rotation: a connection that carried traffic is not a failed connect.
func TestIdleCloseIsNotFailedConnect(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close func(p *faultproxy.Proxy) int
	}{
		{name: "fin", close: (*faultproxy.Proxy).Hangup},
		{name: "reset", close: (*faultproxy.Proxy).Cut},
	} {
		t.Run(tt.name+"/one endpoint", func(t *testing.T) {
			ep := startFaultEP(t, "a")
			comm := newComm(t, faultConf(nil)) // default health rules
			sp := proxyToEPs(t, comm, ep)
			ctx := testCtx(t)
			for i := range 5 {
				if err := onewayHello(ctx, sp, "before", uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, 2*time.Second, "the server runs the one-way calls", func() bool { return ep.g.oneways.Load() == 5 })
			if n := tt.close(ep.p); n != 1 {
				t.Fatalf("closed %d connections, want 1", n)
			}
			eventually(t, time.Second, "the proxy sees both sides closed", func() bool { return ep.p.Stats().Active == 0 })
			// Once the client's loop has seen the close (on a quiet machine, well before the
			// shortest reconnect backoff, 37.5ms), a call finds out whether the close counted as a
			// failed connect. (A fixed 10 ms pause was not always enough on a busy machine: the
			// call was written on the dead connection.)
			sawClose(t, comm, ep)
			for i := range 5 {
				start := time.Now()
				if err := onewayHello(ctx, sp, "after", uint64(i)); err != nil {
					t.Fatalf("one-way call %d after the idle connection was closed: %v", i, err)
				}
				within(t, fmt.Sprintf("one-way call %d after the idle connection was closed (a reconnect at once)", i), time.Since(start), slack)
			}
			eventually(t, 2*time.Second, "the server runs the one-way calls after the close", func() bool { return ep.g.oneways.Load() == 10 })
		})
		t.Run(tt.name+"/two endpoints", func(t *testing.T) {
			a, b := startFaultEP(t, "a"), startFaultEP(t, "b")
			comm := newComm(t, faultConf(nil))
			sp := proxyToEPs(t, comm, a, b)
			ctx := testCtx(t)
			for i := range 10 {
				if err := onewayHello(ctx, sp, "before", uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			// All ten have run (none is still on its way to a, to be counted as one of the calls after the close).
			eventually(t, 2*time.Second, "both servers run one-way calls", func() bool {
				na, nb := a.g.oneways.Load(), b.g.oneways.Load()
				return na > 0 && nb > 0 && na+nb == 10
			})
			tt.close(a.p)
			eventually(t, time.Second, "the proxy sees both sides closed", func() bool { return a.p.Stats().Active == 0 })
			sawClose(t, comm, a)
			a0 := a.g.oneways.Load()
			const n = 40
			for i := range n {
				if err := onewayHello(ctx, sp, "after", uint64(i)); err != nil {
					t.Errorf("one-way call %d after a's idle connection was closed: %v", i, err)
				}
				time.Sleep(2 * time.Millisecond)
			}
			// a's share arrives through the fault proxy and its new connection to a: on a busy
			// machine that takes longer than any fixed pause, so wait up to the liveness bound.
			got := a.g.oneways.Load() - a0
			for deadline := time.Now().Add(live); got < n/4 && time.Now().Before(deadline); got = a.g.oneways.Load() - a0 {
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("after the close, endpoint a ran %d of %d one-way calls", got, n)
			if got < n/4 {
				t.Errorf("endpoint a ran %d of %d one-way calls after its idle connection was closed, want about half: it was taken out of rotation", got, n)
			}
		})
	}
}

// TestKeepAliveSurvivesRefusedPing makes the keepalive ping itself fail at once: the connection's
// send buffer is over send-buffer-limit (the proxy stops reading requests) when the idle
// connection's ping is due, so the ping is refused with ErrQueueFull and recycled. Once the proxy
// reads again, keepalive must go on pinging, interval after interval, on the same connection.
//
// The interval is 200ms: keepalive closes a connection whose ping is not answered within one
// interval, and on a busy 2-core machine under -race a loopback pong can be 50ms late, which
// closed the connection (a new accept) in CI; that is the rule working, not this defect.
func TestKeepAliveSurvivesRefusedPing(t *testing.T) {
	// A ping's deadline is the keepalive interval: the interval must be longer than any pong
	// latency a loaded machine makes. At 200 ms, 1-2 runs in 10 beside two CPU hogs closed the
	// healthy connection ("keepalive ping unanswered", the ping 200 ms old, nothing in the
	// socket to read, the previous pong 475 ms back): load, not a lost pong.
	const ka = time.Second
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.KeepAliveInterval = ka
		c.SendBufferLimit = 64 << 10
		c.AsyncQueueCap = 1000
	}))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "keepalive pings", func() bool { return ep.g.pings.Load() >= 2 })

	ep.p.Stall(faultproxy.Up)
	name := strings.Repeat("p", 1<<20)
	var queueFull atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 200 && queueFull.Load() == 0; i++ {
		wg.Add(1)
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			defer wg.Done()
			if errors.Is(err, communicator.ErrQueueFull) {
				queueFull.Add(1)
			}
		}, servantproxy.WithTimeout(10*time.Second))
		if err != nil {
			wg.Done()
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	waitFor(t, "the send buffer is full", func() bool { return queueFull.Load() > 0 })
	// Idle (nothing written, nothing read) for several intervals: pings are due and refused.
	time.Sleep(3 * ka)
	if err := ep.p.Pass(); err != nil {
		t.Fatal(err)
	}
	wg.Wait() // the stalled calls are answered
	// A ping that went out while the proxy stalled (before the send buffer filled) was rightly
	// left unanswered and closed that connection: count connections from here on.
	if _, err := sayHello(ctx, sp, "resync", 0); err != nil {
		t.Fatal(err)
	}
	// The closed connection took the endpoint out of rotation, and the connection that replaced
	// it opened with a health probe, answered within 500 ms or replaced in turn: under -race the
	// server, still echoing the stalled megabytes, can be that late (1 run in 6 replaced it after
	// "resync"; the rule working, not this defect). Count from when no connection was accepted
	// for a second.
	last, since := ep.p.Stats().Accepts, time.Now()
	waitFor(t, "the connections to settle after the stall", func() bool {
		if n := ep.p.Stats().Accepts; n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= time.Second
	})
	accepts0 := ep.p.Stats().Accepts
	pings0 := ep.g.pings.Load()
	// Keepalive goes on: ping after ping arrives (however late a busy machine makes them).
	const wantPings = 4
	idle := waitFor(t, "keepalive pings again after a refused ping", func() bool { return ep.g.pings.Load()-pings0 >= wantPings })
	t.Logf("%d pings in %v of idleness after a refused ping", ep.g.pings.Load()-pings0, idle)
	if got := ep.p.Stats().Accepts - accepts0; got != 0 {
		t.Errorf("proxy accepted %d connections while the idle connection was pinged, want 0", got)
	}
	// Calls recycled meanwhile must not be mistaken for the ping: short calls that time out
	// must not close the connection.
	ep.g.delay.Store(int64(100 * time.Millisecond))
	for i := range 50 {
		_, _ = sayHello(ctx, sp, "short", uint64(i), servantproxy.WithTimeout(20*time.Millisecond))
	}
	ep.g.delay.Store(0)
	if _, err := sayHello(ctx, sp, "after", 1); err != nil {
		t.Fatalf("call after the timeouts: %v", err)
	}
	if got := ep.p.Stats().Accepts - accepts0; got != 0 {
		t.Errorf("proxy accepted %d connections after timed-out calls, want 0: a recycled call was taken for the ping", got)
	}
}

// TestAbandonedBeforeWrittenNotSent cancels sync and async calls while they wait for their
// endpoint's connect (it hangs until the test releases it), then lets the connect complete with
// one more call queued behind them: the server must see only that last call.
func TestAbandonedBeforeWrittenNotSent(t *testing.T) {
	g := startFGreeter(t, "a")
	h := startHeld(t, g.addr)
	comm := newComm(t, faultConf(func(c *conf.Config) { c.ConnectTimeout = 5 * time.Second }))
	sp := proxyToAddrs(t, comm, tcpEndpoint(h.Addr()))

	const n = 10
	cctx, cancel := context.WithCancel(context.Background())
	syncErrs := make(chan error, n)
	asyncErrs := make([]<-chan error, n)
	for i := range n {
		go func() {
			_, err := sayHello(cctx, sp, "cancelled-sync", uint64(i), servantproxy.WithTimeout(10*time.Second))
			syncErrs <- err
		}()
		done, err := asyncHello(t, cctx, sp, "cancelled-async", uint64(i), servantproxy.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		asyncErrs[i] = done
	}
	time.Sleep(100 * time.Millisecond) // every call is queued on the connecting endpoint
	cancel()
	for i := range n {
		if err := waitErr(syncErrs, time.Second, "cancelled sync call"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled sync call: err = %v, want context.Canceled", err)
		}
		if err := waitErr(asyncErrs[i], time.Second, "cancelled async call"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled async call: err = %v, want context.Canceled", err)
		}
	}
	last := make(chan error, 1)
	go func() {
		_, err := sayHello(context.Background(), sp, "last", 1, servantproxy.WithTimeout(10*time.Second))
		last <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(last, 8*time.Second, "the call after the cancelled ones"); err != nil {
		t.Fatalf("call queued behind the cancelled ones: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // requests written before it have been served too
	if got := g.calls.Load(); got != 1 {
		t.Errorf("the server ran %d requests, want 1: %d calls cancelled before they were written were sent anyway", got, got-1)
	}
}

// TestIdleCloseRacesNewCalls closes idle connections as fast as the client's own idle logic
// allows (-t 1: an idle connection is closed at the next chore) while callers keep arriving at
// random moments, many of them just as a connection is being closed. A call handed to a
// connection that this side is closing must go to a new connection, not fail: no call may end
// with ErrConnection. Chores run at the ticker's wakeups (a lone caller writes its own call
// without waking the loop), so the callers leave the connection idle for a millisecond at a
// good share of those instants: 4 callers with gaps of up to 12 ms.
func TestIdleCloseRacesNewCalls(t *testing.T) {
	const (
		callers = 4
		runFor  = 4 * time.Second
	)
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, ep.endpoint()+" -t 1")
	ctx := testCtx(t)
	var ok, connErrs, other atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(runFor)
	for w := range callers {
		wg.Go(func() {
			r := uint64(w*7919 + 1)
			for time.Now().Before(stop) {
				r = r*6364136223846793005 + 1442695040888963407
				// Gaps of 0-12ms: the connection is often idle, and closed, between calls.
				time.Sleep(time.Duration(r>>40%12000) * time.Microsecond)
				_, err := sayHello(ctx, sp, "idle", r>>32, servantproxy.WithTimeout(time.Second))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, communicator.ErrConnection):
					if connErrs.Add(1) <= 3 {
						t.Errorf("call racing an idle close: %v", err)
					}
				default:
					if other.Add(1) <= 3 {
						t.Errorf("call racing an idle close: err = %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	conns := ep.p.Stats().Accepts
	t.Logf("%d calls succeeded, %d failed with ErrConnection, %d otherwise, over %d connections", ok.Load(), connErrs.Load(), other.Load(), conns)
	if conns < 5 {
		t.Fatalf("only %d connections in %v: the idle close did not happen often enough to test anything", conns, runFor)
	}
}

// sawClose waits until comm's net thread has seen the loss of its connection to e.
func sawClose(t *testing.T, comm *communicator.Communicator, e *faultEP) {
	t.Helper()
	eventually(t, live, "the client sees its connection closed", func() bool {
		for _, x := range comm.Stats().Endpoints {
			if x.Endpoint == e.p.Addr() && x.ConnLosses > 0 {
				return true
			}
		}
		return false
	})
}
