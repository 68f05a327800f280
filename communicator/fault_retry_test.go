package communicator_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// retryConf sets the test servant's retries.
func retryConf(retries int, edit func(*conf.Config)) func(*conf.Config) {
	return faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {Retries: retries}}
		if edit != nil {
			edit(c)
		}
	})
}

// burst makes n sync calls at once (released together) and returns their endpoints and errors.
func burst(t *testing.T, sp *servantproxy.ServantProxy, n int, opts ...servantproxy.CallOption) (from []string, errs []error) {
	t.Helper()
	ctx := testCtx(t)
	from, errs = make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-gate
			from[i], errs[i] = sayHello(ctx, sp, "burst", uint64(i), opts...)
		})
	}
	close(gate)
	wg.Wait()
	return from, errs
}

// TestRetriesRefusedEndpoints has three endpoints, two of which refuse connections, and fires a
// burst of calls at a fresh Communicator, so that calls are routed to every endpoint before any
// dial has failed. With retries = 2 a call whose connect failed is retried on another endpoint
// within its deadline: every call succeeds, on the good endpoint. With retries = 0 (TARS's
// default) the calls routed to the refusing endpoints fail with ErrConnection.
func TestRetriesRefusedEndpoints(t *testing.T) {
	const n = 30
	for _, retries := range []int{0, 2} {
		t.Run(fmt.Sprintf("retries=%d", retries), func(t *testing.T) {
			eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
			for _, e := range eps[:2] {
				if err := e.p.Refuse(faultproxy.Closed); err != nil {
					t.Fatal(err)
				}
			}
			comm := newComm(t, retryConf(retries, nil))
			sp := proxyToEPs(t, comm, eps...)
			start := time.Now()
			from, errs := burst(t, sp, n, servantproxy.WithTimeout(time.Second))
			took := time.Since(start)
			failed := 0
			for i, err := range errs {
				switch {
				case err == nil:
					if from[i] != "c" {
						t.Errorf("call %d answered by %q, want c (the only endpoint up)", i, from[i])
					}
				case errors.Is(err, communicator.ErrConnection) && retries == 0:
					failed++
				default:
					t.Errorf("call %d: err = %v, want %s", i, err, map[bool]string{true: "nil or ErrConnection", false: "nil"}[retries == 0])
				}
			}
			if retries == 0 && failed == 0 {
				t.Errorf("no call failed without retries although %d calls went to two refusing endpoints", n)
			}
			within(t, "the burst (every call well within its 1s deadline)", took, time.Second)
			t.Logf("retries=%d: %d of %d calls failed; burst took %v", retries, failed, n, took)
		})
	}
}

// TestRetriesTryEachEndpointOnce points retries = 5 at three endpoints that all refuse: a call
// tries each endpoint at most once (excluded endpoints are remembered), then fails fast with
// ErrConnection, within its deadline.
func TestRetriesTryEachEndpointOnce(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	for _, e := range eps {
		if err := e.p.Refuse(faultproxy.Reset); err != nil {
			t.Fatal(err)
		}
	}
	comm := newComm(t, retryConf(5, nil))
	sp := proxyToEPs(t, comm, eps...)
	start := time.Now()
	_, err := sayHello(testCtx(t), sp, "x", 1, servantproxy.WithTimeout(time.Second))
	took := time.Since(start)
	if !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", err)
	}
	within(t, "the call failing fast", took, 500*time.Millisecond)
	for _, e := range eps {
		if got := e.p.Stats().Accepts; got > 1 {
			t.Errorf("endpoint %s saw %d connection attempts for one call, want at most 1", e.g.id, got)
		}
	}
}

// TestRetriesNeverAfterTimeout makes every endpoint answer after the call's deadline with
// retries = 2: each call ends with ErrTimeout and runs at most once on the servers (a call that
// timed out before it was written ran nowhere, which a busy machine may do).
func TestRetriesNeverAfterTimeout(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	comm := newComm(t, retryConf(2, nil))
	sp := proxyToEPs(t, comm, eps...)
	ctx := testCtx(t)
	for i := range 3 { // connect all three: the timed calls are written at once
		if _, err := sayHello(ctx, sp, "warm", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	warm := eps[0].g.calls.Load() + eps[1].g.calls.Load() + eps[2].g.calls.Load()
	for _, e := range eps {
		e.g.delay.Store(int64(time.Second))
	}
	const n = 3
	for i := range n {
		if _, err := sayHello(ctx, sp, "x", uint64(i), servantproxy.WithTimeout(100*time.Millisecond)); !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("call %d: err = %v, want ErrTimeout", i, err)
		}
	}
	time.Sleep(1200 * time.Millisecond) // any retry would have reached a server by now
	got := eps[0].g.calls.Load() + eps[1].g.calls.Load() + eps[2].g.calls.Load() - warm
	if got > n {
		t.Fatalf("%d timed-out calls ran %d times on the servers, want at most %d (never retried)", n, got, n)
	}
	if got == 0 {
		t.Fatalf("none of the %d timed-out calls reached a server (written within 100ms on warm connections): the test saw no retry decision", n)
	}
}

// TestRetriesNeverAfterServerError makes every endpoint answer with an error code with
// retries = 2: each call returns the ServerError and ran exactly once.
func TestRetriesNeverAfterServerError(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	for _, e := range eps {
		e.g.failCode.Store(-9) // overloaded
	}
	comm := newComm(t, retryConf(2, nil))
	sp := proxyToEPs(t, comm, eps...)
	ctx := testCtx(t)
	const n = 10
	for i := range n {
		_, err := sayHello(ctx, sp, "x", uint64(i))
		var se *communicator.ServerError
		if !errors.As(err, &se) || se.Code != -9 {
			t.Fatalf("call %d: err = %v, want a ServerError with code -9", i, err)
		}
	}
	if got := eps[0].g.calls.Load() + eps[1].g.calls.Load() + eps[2].g.calls.Load(); got != n {
		t.Fatalf("%d calls answered with an error ran %d times, want %d (never retried)", n, got, n)
	}
}

// TestRetriesNeverAfterWrite cuts the connection of calls that were written and are running on
// the server, with retries = 2: they fail with ErrConnection and are not run on another endpoint.
func TestRetriesNeverAfterWrite(t *testing.T) {
	eps := []*faultEP{startFaultEP(t, "a"), startFaultEP(t, "b"), startFaultEP(t, "c")}
	comm := newComm(t, retryConf(2, nil))
	sp := proxyToEPs(t, comm, eps...)
	ctx := testCtx(t)
	for i := range 3 { // connect all three
		if _, err := sayHello(ctx, sp, "warm", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range eps {
		e.g.delay.Store(int64(time.Second))
	}
	const n = 6
	errc := make(chan error, n)
	for i := range n {
		go func() {
			_, err := sayHello(ctx, sp, "x", uint64(i))
			errc <- err
		}()
	}
	eventually(t, 2*time.Second, "the calls run on the servers", func() bool {
		return eps[0].g.calls.Load()+eps[1].g.calls.Load()+eps[2].g.calls.Load() == 3+n
	})
	for _, e := range eps {
		e.p.Cut()
	}
	for range n {
		if err := waitErr(errc, time.Second, "call on a cut connection"); !errors.Is(err, communicator.ErrConnection) {
			t.Errorf("written call on a cut connection: err = %v, want ErrConnection", err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if got := eps[0].g.calls.Load() + eps[1].g.calls.Load() + eps[2].g.calls.Load(); got != 3+n {
		t.Fatalf("servers ran %d calls, want %d: a written call was retried", got, 3+n)
	}
}
