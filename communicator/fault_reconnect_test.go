package communicator_test

import (
	"context"
	"errors"
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

// backoffMax is the longest reconnect backoff the engine promises (adapterproxy's backoffMax).
const backoffMax = 5 * time.Second

// TestReconnectDialRateBounded takes the server down behind a listener that accepts and resets
// at once (a load balancer without a backend, so the proxy counts the dials) while many
// goroutines keep calling: every call fails fast with ErrConnection, the client dials far less
// often than it calls (exponential backoff, no reconnect storm), and once the server is back
// calls succeed again within the backoff.
func TestReconnectDialRateBounded(t *testing.T) {
	reconnectWhileDown(t, faultproxy.Reset)
}

// TestReconnectRefused is TestReconnectDialRateBounded with the port closed (connects refused
// by the kernel): calls fail fast with ErrConnection and succeed again within the backoff once
// the server is back. (A refused connect never reaches the proxy, so dials are not counted.)
func TestReconnectRefused(t *testing.T) {
	reconnectWhileDown(t, faultproxy.Closed)
}

func reconnectWhileDown(t *testing.T, how faultproxy.Refusal) {
	const (
		callers  = 16
		downFor  = 1500 * time.Millisecond
		maxDials = 40
	)
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(nil))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	if err := ep.p.Refuse(how); err != nil {
		t.Fatal(err)
	}
	ep.p.Cut()
	accepts0 := ep.p.Stats().Accepts

	var calls, slow atomic.Int64
	var mu sync.Mutex
	var wrong []error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				_, err := sayHello(ctx, sp, "down", 1)
				if time.Since(start) > 200*time.Millisecond {
					slow.Add(1)
				}
				calls.Add(1)
				if !errors.Is(err, communicator.ErrConnection) {
					mu.Lock()
					wrong = append(wrong, err)
					mu.Unlock()
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(downFor)
	close(stop)
	wg.Wait()
	dials := ep.p.Stats().Accepts - accepts0
	t.Logf("%d calls, %d dials seen by the proxy while the server was down for %v", calls.Load(), dials, downFor)
	for i, err := range wrong {
		if i == 3 {
			break
		}
		t.Errorf("call to a down server: err = %v, want ErrConnection", err)
	}
	// ErrConnection (not ErrTimeout) says each failed without waiting; how fast is a figure.
	timingFigure(t, slow.Load() == 0, slow.Load() > calls.Load()/10, "%d of %d calls to a down server took over 200ms (target none)", slow.Load(), calls.Load())
	if how == faultproxy.Reset && dials >= maxDials {
		t.Errorf("%d dials in %v, want fewer than %d (backoff)", dials, downFor, maxDials)
	}
	if calls.Load() < 10*max(dials, 1) {
		t.Errorf("%d calls made for %d dials, want ten times as many calls at least: the client dials per call", calls.Load(), dials)
	}

	// Back up: a call succeeds within the backoff.
	if err := ep.p.Pass(); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, backoffMax+time.Second, "a call succeeds after the server is back", func() bool {
		_, err := sayHello(ctx, sp, "back", 1)
		return err == nil
	})
	t.Logf("calls succeed again %v after the server came back", took)
}

// TestReconnectCutFailsInFlight cuts the connection (RST) under sync and async calls waiting for
// a slow server: every one fails at once with ErrConnection, far before its 3s timeout, and the
// next call reconnects and succeeds.
func TestReconnectCutFailsInFlight(t *testing.T) {
	ep := startFaultEP(t, "a")
	// The calls wait for a reply 20s away with 30s timeouts: only the cut can end them soon.
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.g.delay.Store(int64(20 * time.Second))

	const n = 20
	syncErrs := make(chan error, n)
	asyncErrs := make([]<-chan error, n)
	for i := range n {
		go func() {
			_, err := sayHello(ctx, sp, "sync", uint64(i))
			syncErrs <- err
		}()
		done, err := asyncHello(t, ctx, sp, "async", uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		asyncErrs[i] = done
	}
	eventually(t, 2*time.Second, "all calls reach the server", func() bool { return ep.g.calls.Load() == 1+2*n })
	cut := time.Now()
	if got := ep.p.Cut(); got != 1 {
		t.Fatalf("cut %d connections, want 1", got)
	}
	for i := range n {
		if err := waitErr(syncErrs, live, "sync call"); !errors.Is(err, communicator.ErrConnection) {
			t.Errorf("sync call on a cut connection: err = %v, want ErrConnection", err)
		}
		if err := waitErr(asyncErrs[i], live, "async callback"); !errors.Is(err, communicator.ErrConnection) {
			t.Errorf("async call on a cut connection: err = %v, want ErrConnection", err)
		}
	}
	// ErrConnection (not a reply after 20s or ErrTimeout after 30s) says the cut ended them.
	within(t, "failing the calls on a cut connection", time.Since(cut), tick+slack)

	ep.g.delay.Store(0)
	start := time.Now()
	if _, err := sayHello(ctx, sp, "after", 1); err != nil {
		t.Fatalf("call after the cut: %v", err)
	}
	within(t, "the first call after the cut (an immediate reconnect)", time.Since(start), slack)
}

// TestReconnectConnectTimeout dials an address whose connects hang with connect-timeout 100ms
// and a call timeout of 2s: the call fails with ErrConnection when the connect times out, not
// when the call does.
func TestReconnectConnectTimeout(t *testing.T) {
	const connectTimeout = 100 * time.Millisecond
	st := startStalled(t)
	comm := newComm(t, faultConf(func(c *conf.Config) { c.ConnectTimeout = connectTimeout }))
	sp := proxyToAddrs(t, comm, tcpEndpoint(st.Addr()))
	start := time.Now()
	_, err := sayHello(testCtx(t), sp, "x", 1, servantproxy.WithTimeout(2*time.Second))
	took := time.Since(start)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", err)
	}
	checkTook(t, "a call whose connect hangs", took, connectTimeout-5*time.Millisecond, connectTimeout+tick+slack)
}

// TestReconnectHangingDialDoesNotBlockLoop keeps a dial hanging on the only net thread while
// calls to a healthy server on the same thread go on: dials run off the loop.
func TestReconnectHangingDialDoesNotBlockLoop(t *testing.T) {
	st := startStalled(t)
	g := startFGreeter(t, "a")
	// The hanging dial lasts 30s: a loop blocked by it would hold a call far past live.
	comm := newComm(t, faultConf(func(c *conf.Config) { c.ConnectTimeout = 30 * time.Second }))
	stalled, err := comm.Proxy("Stalled.Obj@" + tcpEndpoint(st.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	good := proxyToAddrs(t, comm, g.endpoint())
	ctx := testCtx(t)

	hung := make(chan error, 1)
	go func() {
		hung <- stalled.Invoke(context.Background(), "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), servantproxy.WithTimeout(time.Second))
	}()
	time.Sleep(50 * time.Millisecond) // the dial is under way
	for i := range 20 {
		start := time.Now()
		if _, err := sayHello(ctx, good, "x", uint64(i)); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > live {
			t.Fatalf("call %d to a healthy server took %v while another dial hangs: the dial blocks the loop", i, took)
		}
	}
	if err := waitErr(hung, 3*time.Second, "call to the stalled address"); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("call to the stalled address: err = %v, want ErrTimeout", err)
	}
}
