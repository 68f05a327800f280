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
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestManyCallersSyncAndAsync sends sync and async calls from many goroutines through 1 and 4
// net threads to 3 endpoints and checks that every reply answers its own request, that every
// callback runs once, and that round-robin reaches every endpoint.
func TestManyCallersSyncAndAsync(t *testing.T) {
	for _, threads := range []int{1, 4} {
		t.Run(fmt.Sprintf("netthread=%d", threads), func(t *testing.T) {
			gs := []*greeter{startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{}), startGreeter(t, "c", serverOpt{})}
			// Every call must succeed: its timeouts are liveness bounds (a busy 2-core machine
			// under -race can hold a call past the default 3s).
			comm := newComm(t, func(c *conf.Config) { c.NetThread = threads; livenessTimeouts(c) })
			sp := proxyTo(t, comm, gs...)
			ctx := testCtx(t)

			const callers, calls = 32, 150
			var mu sync.Mutex
			hits := map[string]int{}
			var wg sync.WaitGroup
			errs := make(chan error, callers*calls*2)
			var callbacks atomic.Int64
			for g := range callers {
				wg.Go(func() {
					for i := range calls {
						seq := uint64(g*calls + i)
						from, err := sayHello(ctx, sp, "sync", seq)
						if err != nil {
							errs <- fmt.Errorf("sync seq %d: %w", seq, err)
							continue
						}
						mu.Lock()
						hits[from]++
						mu.Unlock()

						rsp := new(hellopb.HelloReply)
						wg.Add(1)
						err = sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "async", Seq: seq}, rsp, func(err error) {
							defer wg.Done()
							callbacks.Add(1)
							if err == nil {
								_, err = checkReply(rsp, "async", seq)
							}
							if err != nil {
								errs <- fmt.Errorf("async seq %d: %w", seq, err)
							}
						})
						if err != nil {
							wg.Done()
							errs <- fmt.Errorf("async seq %d not sent: %w", seq, err)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if got, want := callbacks.Load(), int64(callers*calls); got != want {
				t.Fatalf("%d callbacks ran, want %d", got, want)
			}
			for _, g := range gs {
				if hits[g.id] == 0 {
					t.Fatalf("endpoint %s got no sync call: %v", g.id, hits)
				}
			}
		})
	}
}

// TestHashSticksToOneEndpoint checks that calls with the same hash code always reach the same
// endpoint, and that different codes spread over the endpoints.
func TestHashSticksToOneEndpoint(t *testing.T) {
	gs := []*greeter{startGreeter(t, "a", serverOpt{}), startGreeter(t, "b", serverOpt{}), startGreeter(t, "c", serverOpt{})}
	// Every call must succeed: connect and call timeouts are liveness bounds (CI saw "connect did
	// not complete within 2s" on a machine at load 6-18: a loopback connect does not fail there,
	// it is late).
	comm := newComm(t, func(c *conf.Config) { c.NetThread = 2; livenessTimeouts(c) })
	sp := proxyTo(t, comm, gs...)
	ctx := testCtx(t)
	used := map[string]bool{}
	for key := uint64(0); key < 30; key++ {
		first := ""
		for i := range 10 {
			from, err := sayHello(ctx, sp, "h", uint64(i), servantproxy.WithHash(key))
			if err != nil {
				t.Fatal(err)
			}
			if first == "" {
				first = from
			} else if from != first {
				t.Fatalf("hash %d: call %d reached %s, earlier calls reached %s", key, i, from, first)
			}
		}
		used[first] = true
	}
	if len(used) < 2 {
		t.Fatalf("30 hash codes all reached %v: hashing does not spread", used)
	}
}

// TestStalledServerTimesOut checks that a call to a server that never answers fails with
// ErrTimeout at its own deadline (not before; not at the configured default, which is a minute
// here), and that the error also matches context.DeadlineExceeded. How soon after the deadline
// (one check interval) is a figure.
func TestStalledServerTimesOut(t *testing.T) {
	g := startGreeter(t, "stalled", serverOpt{block: true})
	const interval = 10 * time.Millisecond
	comm := newComm(t, func(c *conf.Config) {
		c.TimeoutCheckInterval = interval
		c.SyncInvokeTimeout, c.AsyncInvokeTimeout = time.Minute, time.Minute
	})
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	for _, timeout := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
		start := time.Now()
		_, err := sayHello(ctx, sp, "x", 1, servantproxy.WithTimeout(timeout))
		took := time.Since(start)
		if !errors.Is(err, communicator.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("timeout %v: err = %v, want ErrTimeout matching context.DeadlineExceeded", timeout, err)
		}
		if took < timeout || took > timeout+live {
			t.Fatalf("timeout %v: the call returned after %v", timeout, took)
		}
		timingFigure(t, took <= timeout+interval+100*time.Millisecond, took > timeout+time.Second,
			"a call with timeout %v to a stalled server ended after %v (target within one check interval %v + 100ms)", timeout, took, interval)
	}
	// The context's deadline wins when it is earlier than the configured timeout, and async
	// calls time out too.
	cctx, cancel := context.WithTimeout(ctx, 60*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	if err := sp.AsyncInvoke(cctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("async err = %v, want ErrTimeout", err)
	}
	took := time.Since(start)
	if took > 60*time.Millisecond+live {
		t.Fatalf("async call ended after %v, deadline was 60ms", took)
	}
	timingFigure(t, took <= 60*time.Millisecond+interval+100*time.Millisecond, took > time.Second,
		"an async call with a 60ms context deadline ended after %v (target within one check interval + 100ms)", took)
}

// TestCancelEndsCallAtOnce checks that cancelling the context returns at once with
// context.Canceled, and that the proxy still works afterwards.
func TestCancelEndsCallAtOnce(t *testing.T) {
	g := startGreeter(t, "slow", serverOpt{block: true})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := sayHello(ctx, sp, "x", 1)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("cancelled call did not return")
	}
	close(g.release)
	if _, err := sayHello(testCtx(t), sp, "after", 2); err != nil {
		t.Fatalf("call after a cancelled one: %v", err)
	}
}

// TestKilledServerFailsInFlightCallsPromptly kills a server with calls in flight: they must
// fail with ErrConnection long before their 3 s timeout, and calls succeed again once a server
// is back on the same address.
func TestKilledServerFailsInFlightCallsPromptly(t *testing.T) {
	g := startGreeter(t, "first", serverOpt{block: true, hold: true})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	const n = 20
	errc := make(chan error, n)
	for i := range n {
		go func() {
			_, err := sayHello(ctx, sp, "x", uint64(i))
			errc <- err
		}()
	}
	time.Sleep(100 * time.Millisecond) // let them reach the server
	start := time.Now()
	g.kill(t)
	for range n {
		err := <-errc
		if !errors.Is(err, communicator.ErrConnection) {
			t.Fatalf("in-flight call: err = %v, want ErrConnection", err)
		}
	}
	// ErrConnection, not ErrTimeout, says they did not wait for their timeout; how soon is a figure.
	took := time.Since(start)
	timingFigure(t, took <= time.Second, took > 2500*time.Millisecond, "in-flight calls failed %v after the server died (target within 1s)", took)

	// While the server is down calls fail fast with a connection error, not a timeout.
	start = time.Now()
	if _, err := sayHello(ctx, sp, "down", 1); !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("call to a dead server: err = %v, want ErrConnection", err)
	}
	took = time.Since(start)
	timingFigure(t, took <= time.Second, took > 2500*time.Millisecond, "a call to a dead server failed after %v (target within 1s)", took)

	// Back on the same address: calls succeed again after the reconnect backoff.
	startGreeter(t, "second", serverOpt{addr: g.addr})
	deadline := time.Now().Add(10 * time.Second)
	for {
		from, err := sayHello(ctx, sp, "back", 1)
		if err == nil {
			if from != "second" {
				t.Fatalf("reply from %q, want the restarted server", from)
			}
			break
		}
		if !errors.Is(err, communicator.ErrConnection) || time.Now().After(deadline) {
			t.Fatalf("after restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerErrorsAreTyped checks the TARS return codes a server answers with reach the caller
// as *ServerError with the code, the description and the endpoint that answered (before, a
// ServerError did not say which of a proxy's servers answered).
func TestServerErrorsAreTyped(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, nil)
	ctx := testCtx(t)
	tests := []struct {
		name     string
		servant  string
		fn       string
		body     []byte
		wantCode int32
	}{
		{name: "unknown function", servant: servant, fn: "NoSuchFunc", wantCode: -3},
		{name: "unknown servant", servant: "No.Such.Obj", fn: "SayHello", wantCode: -4},
		{name: "undecodable body", servant: servant, fn: "SayHello", body: []byte{0xff, 0xff, 0xff}, wantCode: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sp servantproxy.ServantProxy
			if err := comm.StringToProxy(tt.servant+"@"+g.endpoint(), &sp); err != nil {
				t.Fatal(err)
			}
			_, err := sp.InvokeRaw(ctx, tt.fn, tt.body)
			var se *communicator.ServerError
			if !errors.As(err, &se) || se.Code != tt.wantCode {
				t.Fatalf("err = %v, want a ServerError with code %d", err, tt.wantCode)
			}
			if se.Desc == "" {
				t.Fatalf("ServerError %d has no description", se.Code)
			}
			if se.Endpoint != g.addr || !strings.Contains(err.Error(), g.addr) {
				t.Fatalf("ServerError.Endpoint = %q (text %q), want %s", se.Endpoint, err, g.addr)
			}
		})
	}
}

// TestContextStatusOnewayAndPing checks that per-call TARS context and status maps reach the
// server, that one-way calls are delivered without a reply, and tars_ping.
func TestContextStatusOnewayAndPing(t *testing.T) {
	seen := make(chan *server.Current, 10)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	_, err := sayHello(ctx, sp, "ctx", 1,
		servantproxy.WithContext(map[string]string{"trace": "abc"}),
		servantproxy.WithStatus(map[string]string{"dye": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	cur := <-seen
	if cur.Context["trace"] != "abc" || cur.Status["dye"] != "1" {
		t.Fatalf("server saw context %v status %v, want trace=abc dye=1", cur.Context, cur.Status)
	}
	if cur.Timeout <= 0 || cur.Timeout > 3000 {
		t.Fatalf("server saw iTimeout %d ms, want the time left of a 3 s deadline", cur.Timeout)
	}

	if err := sp.InvokeOneway(ctx, "SayHello", &hellopb.HelloRequest{Name: "oneway"}); err != nil {
		t.Fatal(err)
	}
	select {
	case cur := <-seen:
		if cur.PacketType != 1 {
			t.Fatalf("one-way request arrived with packet type %d", cur.PacketType)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("one-way call never reached the server")
	}
	if err := sp.Ping(ctx); err != nil {
		t.Fatalf("tars_ping: %v", err)
	}
	// The connection is still in step after a one-way call: replies match requests.
	if _, err := sayHello(ctx, sp, "after-oneway", 9); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput checks the errors for bad proxy strings, unsupported protocols, a servant
// without endpoints and bad call arguments.
func TestBadInput(t *testing.T) {
	comm := newComm(t, nil)
	ctx := testCtx(t)
	for _, s := range []string{"", "@tcp -h 1.2.3.4 -p 1", "Obj@tcp -p 1", "Obj@tcp -h 127.0.0.1 -p 99999"} {
		if _, err := comm.Proxy(s); err == nil {
			t.Errorf("Proxy(%q) succeeded, want an error", s)
		}
	}
	if _, err := comm.Proxy("Obj@udp -h 127.0.0.1 -p 1 -e 1"); err == nil || !strings.Contains(err.Error(), "udp has no connection to authenticate") {
		t.Errorf("udp endpoint with -e 1: %v, want a clear refusal", err)
	}
	if err := comm.StringToProxy("Obj@tcp -h 127.0.0.1 -p 1", 42); err == nil {
		t.Error("StringToProxy into an int succeeded")
	}
	if _, err := comm.Proxy("Bare.Obj"); !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Fatalf("Proxy of a bare object without naming: err = %v, want ErrNoEndpoint", err)
	}
	sp, err := comm.Proxy("Bare.Obj@tcp -h 127.0.0.1 -p 1")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.AsyncInvoke(ctx, "f", nil, nil, nil); err == nil {
		t.Fatal("AsyncInvoke with a nil callback succeeded")
	}
	var unbound servantproxy.ServantProxy
	if err := unbound.Invoke(ctx, "f", nil, nil); err == nil || !strings.Contains(err.Error(), "StringToProxy") {
		t.Fatalf("call on an unbound proxy: err = %v, want an error naming StringToProxy", err)
	}
	var nilProxy *servantproxy.ServantProxy
	if err := nilProxy.AsyncInvoke(ctx, "f", nil, nil, func(error) {}); err == nil {
		t.Fatal("AsyncInvoke on a nil proxy succeeded")
	}
	same, err := comm.Proxy("Bare.Obj@tcp -h 127.0.0.1 -p 1")
	if err != nil || same.Name() != "Bare.Obj" {
		t.Fatalf("second Proxy for the same object: %v, %v", same, err)
	}
}
