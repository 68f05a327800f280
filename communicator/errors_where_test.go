package communicator_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// Issue 9 item 6: an error says where. A timeout, connection, queue-full or no-endpoint error
// names the servant, the function, the endpoint when one was chosen, and the time spent, and
// still matches its sentinel; a cancelled sync call and a cancelled async call end alike.

// durationRE matches a Go duration as time.Duration.String writes it ("312.5ms", "1.2s").
var durationRE = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|us|ms|s|m)\b`)

// checkWhere fails t unless err's message names servant, fn, addr (when not "") and a duration.
func checkWhere(t *testing.T, what string, err error, servantName, fn, addr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: err = nil, want an error", what)
	}
	msg := err.Error()
	for _, want := range []string{servantName, fn, addr} {
		if want != "" && !strings.Contains(msg, want) {
			t.Errorf("%s: error %q does not name %q", what, msg, want)
		}
	}
	if !durationRE.MatchString(msg) {
		t.Errorf("%s: error %q does not say how long the call took", what, msg)
	}
}

// TestErrorsWhereTimeout: sync, async and context-deadline timeouts on a black-holed endpoint.
func TestErrorsWhereTimeout(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(nil))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.BlackHole(faultproxy.Both)
	opt := servantproxy.WithTimeout(100 * time.Millisecond)

	_, err := sayHello(ctx, sp, "sync", 1, opt)
	checkTimeout(t, "sync timeout", err, ep.p.Addr())

	done, err := asyncHello(t, ctx, sp, "async", 2, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkTimeout(t, "async timeout", waitErr(done, 2*time.Second, "async callback"), ep.p.Addr())

	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = sayHello(dctx, sp, "ctx", 3)
	checkTimeout(t, "context deadline", err, ep.p.Addr())
}

func checkTimeout(t *testing.T, what string, err error, addr string) {
	t.Helper()
	if !errors.Is(err, communicator.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%s: err = %v, want it to match ErrTimeout and context.DeadlineExceeded", what, err)
	}
	checkWhere(t, what, err, servant, "SayHello", addr)
}

// TestErrorsWhereConnection: a call to a refused endpoint.
func TestErrorsWhereConnection(t *testing.T) {
	ep := startFaultEP(t, "a")
	if err := ep.p.Refuse(faultproxy.Closed); err != nil {
		t.Fatal(err)
	}
	comm := newComm(t, faultConf(nil))
	sp := proxyToEPs(t, comm, ep)
	_, err := sayHello(testCtx(t), sp, "x", 1)
	var ce *servantproxy.ConnError
	if !errors.Is(err, communicator.ErrConnection) || !errors.As(err, &ce) {
		t.Errorf("call to a refused endpoint: err = %v, want ErrConnection and a *ConnError", err)
	}
	checkWhere(t, "connection error", err, servant, "SayHello", ep.p.Addr())
}

// TestErrorsWhereQueueFull: a call refused because its connection's unsent bytes are over
// send-buffer-limit (the proxy stopped reading requests), so an endpoint was chosen.
func TestErrorsWhereQueueFull(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.SendBufferLimit = 64 << 10
		c.AsyncQueueCap = 1000
	}))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.Stall(faultproxy.Up)
	name := strings.Repeat("f", 1<<20)
	var wg sync.WaitGroup
	var full atomic.Pointer[error] // the first refusal: the call's own error, as its caller saw it
	for i := 0; i < 300 && full.Load() == nil; i++ {
		wg.Add(1)
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			defer wg.Done()
			if errors.Is(err, communicator.ErrQueueFull) {
				full.CompareAndSwap(nil, &err)
			}
		}, servantproxy.WithTimeout(time.Second))
		if err != nil {
			wg.Done()
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	eventually(t, 5*time.Second, "the send buffer is full", func() bool { return full.Load() != nil })
	// The refusal itself is checked, not a later call's: send-buffer-limit counts the bytes the
	// client holds, and the large-frame writer may hand the rest of its frame to the kernel's
	// socket buffers meanwhile, so a call made after the refusal may find room (and then time
	// out against the stalled proxy: seen in 2 of 5 runs without -race).
	checkWhere(t, "queue-full error", *full.Load(), servant, "SayHello", ep.p.Addr())
	_ = ep.p.Pass()
	wg.Wait()
}

// TestErrorsWhereNoEndpoint: a call to an object without endpoints (its naming source has
// none for it).
func TestErrorsWhereNoEndpoint(t *testing.T) {
	comm := newCommWith(t, faultConf(nil), communicator.WithNaming(naming.Static{}))
	sp, err := comm.Proxy("Bare.Server.Obj")
	if err != nil {
		t.Fatal(err)
	}
	_, err = sp.InvokeRaw(testCtx(t), "lookup", nil)
	if !errors.Is(err, communicator.ErrNoEndpoint) {
		t.Errorf("call without endpoints: err = %v, want ErrNoEndpoint", err)
	}
	checkWhere(t, "no-endpoint error", err, "Bare.Server.Obj", "lookup", "")
}

// digitsRE masks numbers, so that two messages of the same shape compare equal.
var digitsRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// TestErrorsCancelSameSyncAsync cancels a pending sync call and a pending async call: both end
// with an error matching context.Canceled, of the same shape (equal but for numbers).
func TestErrorsCancelSameSyncAsync(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(nil))
	sp := proxyToEPs(t, comm, ep)
	if _, err := sayHello(testCtx(t), sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.BlackHole(faultproxy.Both)

	sctx, scancel := context.WithCancel(context.Background())
	syncErr := make(chan error, 1)
	go func() {
		_, err := sayHello(sctx, sp, "x", 1)
		syncErr <- err
	}()
	actx, acancel := context.WithCancel(context.Background())
	done, err := asyncHello(t, actx, sp, "x", 1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // both are pending
	scancel()
	acancel()
	se := waitErr(syncErr, time.Second, "cancelled sync call")
	ae := waitErr(done, time.Second, "cancelled async call")
	if !errors.Is(se, context.Canceled) || !errors.Is(ae, context.Canceled) {
		t.Fatalf("cancelled calls: sync err = %v, async err = %v; want both to match context.Canceled", se, ae)
	}
	if s, a := digitsRE.ReplaceAllString(se.Error(), "N"), digitsRE.ReplaceAllString(ae.Error(), "N"); s != a {
		t.Errorf("a cancelled sync call ends with %q, a cancelled async call with %q; want the same error", se, ae)
	}
}
