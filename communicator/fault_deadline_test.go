package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestDeadlineBlackHole sends sync and async calls through a proxy that swallows everything: each
// ends with ErrTimeout (also context.DeadlineExceeded) at its deadline, no earlier and no later
// than one check interval plus slack. The deadline is the earlier of the context's and the
// configured timeout: sync-invoke-timeout / async-invoke-timeout, a per-servant override, or
// WithTimeout.
func TestDeadlineBlackHole(t *testing.T) {
	servantCfg := func(s conf.Servant) func(*conf.Config) {
		return func(c *conf.Config) { c.Servants = map[string]conf.Servant{servant: s} }
	}
	tests := []struct {
		name string
		kind callKind
		cfg  func(*conf.Config)
		ctx  time.Duration // the context's timeout; 0: no deadline
		opts []servantproxy.CallOption
		want time.Duration // the call's effective deadline
	}{
		{name: "sync/config", kind: syncCall, cfg: func(c *conf.Config) { c.SyncInvokeTimeout = 150 * time.Millisecond }, want: 150 * time.Millisecond},
		{name: "sync/ctx earlier than config", kind: syncCall, cfg: func(c *conf.Config) { c.SyncInvokeTimeout = time.Second }, ctx: 100 * time.Millisecond, want: 100 * time.Millisecond},
		{name: "sync/config earlier than ctx", kind: syncCall, cfg: func(c *conf.Config) { c.SyncInvokeTimeout = 100 * time.Millisecond }, ctx: 2 * time.Second, want: 100 * time.Millisecond},
		{name: "sync/servant override", kind: syncCall, cfg: servantCfg(conf.Servant{SyncInvokeTimeout: 120 * time.Millisecond}), want: 120 * time.Millisecond},
		{name: "sync/WithTimeout", kind: syncCall, opts: []servantproxy.CallOption{servantproxy.WithTimeout(100 * time.Millisecond)}, want: 100 * time.Millisecond},
		{name: "sync/ctx earlier than WithTimeout", kind: syncCall, ctx: 80 * time.Millisecond, opts: []servantproxy.CallOption{servantproxy.WithTimeout(time.Second)}, want: 80 * time.Millisecond},
		{name: "async/config", kind: asyncCall, cfg: func(c *conf.Config) { c.AsyncInvokeTimeout = 150 * time.Millisecond }, want: 150 * time.Millisecond},
		{name: "async/sync timeout does not apply", kind: asyncCall, cfg: func(c *conf.Config) {
			c.SyncInvokeTimeout, c.AsyncInvokeTimeout = 40*time.Millisecond, 150*time.Millisecond
		}, want: 150 * time.Millisecond},
		{name: "async/ctx earlier than config", kind: asyncCall, cfg: func(c *conf.Config) { c.AsyncInvokeTimeout = time.Second }, ctx: 100 * time.Millisecond, want: 100 * time.Millisecond},
		{name: "async/servant override", kind: asyncCall, cfg: servantCfg(conf.Servant{AsyncInvokeTimeout: 120 * time.Millisecond}), want: 120 * time.Millisecond},
		{name: "async/WithTimeout", kind: asyncCall, opts: []servantproxy.CallOption{servantproxy.WithTimeout(100 * time.Millisecond)}, want: 100 * time.Millisecond},
		{name: "async/ctx earlier than WithTimeout", kind: asyncCall, ctx: 80 * time.Millisecond, opts: []servantproxy.CallOption{servantproxy.WithTimeout(time.Second)}, want: 80 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := startFaultEP(t, "bh")
			comm := newComm(t, faultConf(tt.cfg))
			sp := proxyToEPs(t, comm, ep)
			ep.p.BlackHole(faultproxy.Both)

			ctx := testCtx(t)
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			start := time.Now()
			err := callOnce(t, ctx, tt.kind, sp, 1, 5*time.Second, tt.opts...)
			took := time.Since(start)
			if !errors.Is(err, communicator.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want ErrTimeout matching context.DeadlineExceeded", err)
			}
			checkTook(t, "the call", took, tt.want-5*time.Millisecond, tt.want+tick+slack)
		})
	}

	// A one-way call through the black hole is written, which is all it waits for: it returns
	// nil well before its deadline.
	t.Run("oneway", func(t *testing.T) {
		ep := startFaultEP(t, "bh")
		comm := newComm(t, faultConf(nil))
		sp := proxyToEPs(t, comm, ep)
		ep.p.BlackHole(faultproxy.Both)
		start := time.Now()
		err := callOnce(t, testCtx(t), onewayCall, sp, 1, 5*time.Second, servantproxy.WithTimeout(200*time.Millisecond))
		if err != nil {
			t.Fatalf("one-way call through a black hole: err = %v, want nil (it was written)", err)
		}
		checkTook(t, "the one-way call", time.Since(start), 0, 200*time.Millisecond+tick+slack)
	})
}

// TestDeadlineHangingConnect points the client at an address whose connects hang (a full accept
// queue drops the SYNs) with a connect timeout longer than the call's deadline: sync, async and
// one-way calls all end with ErrTimeout at their deadline, not at the connect timeout.
func TestDeadlineHangingConnect(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, kind := range []callKind{syncCall, asyncCall, onewayCall} {
		t.Run(string(kind), func(t *testing.T) {
			st := startStalled(t)
			comm := newComm(t, faultConf(func(c *conf.Config) { c.ConnectTimeout = 2 * time.Second }))
			sp := proxyToAddrs(t, comm, tcpEndpoint(st.Addr()))
			start := time.Now()
			err := callOnce(t, testCtx(t), kind, sp, 1, 5*time.Second, servantproxy.WithTimeout(timeout))
			took := time.Since(start)
			if !errors.Is(err, communicator.ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			checkTook(t, "the call", took, timeout-5*time.Millisecond, timeout+tick+slack)
		})
	}
}

// TestDeadlineCancel cancels the context of calls that cannot finish (a black hole, or a hanging
// connect for one-way calls): each ends at once with context.Canceled, an async call's callback
// runs once with it, and the proxy works normally afterwards.
func TestDeadlineCancel(t *testing.T) {
	const cancelAfter = 50 * time.Millisecond
	for _, kind := range []callKind{syncCall, asyncCall, onewayCall} {
		t.Run(string(kind), func(t *testing.T) {
			ep := startFaultEP(t, "bh")
			comm := newComm(t, faultConf(nil))
			var sp *servantproxy.ServantProxy
			if kind == onewayCall {
				sp = proxyToAddrs(t, comm, tcpEndpoint(startStalled(t).Addr()))
			} else {
				sp = proxyToEPs(t, comm, ep)
				ep.p.BlackHole(faultproxy.Both)
			}
			ctx, cancel := context.WithCancel(context.Background()) // no deadline
			defer cancel()
			tm := time.AfterFunc(cancelAfter, cancel)
			defer tm.Stop()
			start := time.Now()
			err := callOnce(t, ctx, kind, sp, 1, 5*time.Second)
			took := time.Since(start)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			checkTook(t, "the cancelled call", took, cancelAfter-5*time.Millisecond, cancelAfter+slack)

			if kind == onewayCall {
				return // the stalled address never works
			}
			if err := ep.p.Pass(); err != nil {
				t.Fatal(err)
			}
			if err := callOnce(t, testCtx(t), kind, sp, 2, 5*time.Second); err != nil {
				t.Fatalf("call after the cancelled one: %v", err)
			}
		})
	}
}

// TestDeadlineLateReplyDropped lets the server answer after the caller's deadline (a slow handler,
// or a proxy delaying the reply): the caller sees ErrTimeout exactly once, the late reply is
// dropped, the request ran once on the server, and the next call on the same connection gets its
// own reply.
func TestDeadlineLateReplyDropped(t *testing.T) {
	const (
		timeout = 50 * time.Millisecond
		late    = 200 * time.Millisecond
	)
	for _, how := range []string{"slow handler", "delayed reply"} {
		for _, kind := range []callKind{syncCall, asyncCall} {
			t.Run(fmt.Sprintf("%s/%s", how, kind), func(t *testing.T) {
				ep := startFaultEP(t, "late")
				comm := newComm(t, faultConf(nil))
				sp := proxyToEPs(t, comm, ep)
				ctx := testCtx(t)
				if err := callOnce(t, ctx, kind, sp, 1, 5*time.Second); err != nil {
					t.Fatalf("warm-up call: %v", err)
				}
				accepts := ep.p.Stats().Accepts

				if how == "slow handler" {
					ep.g.delay.Store(int64(late))
				} else {
					ep.p.SetDelay(late)
				}
				start := time.Now()
				err := callOnce(t, ctx, kind, sp, 2, 5*time.Second, servantproxy.WithTimeout(timeout))
				if !errors.Is(err, communicator.ErrTimeout) {
					t.Fatalf("late call: err = %v, want ErrTimeout", err)
				}
				checkTook(t, "the late call", time.Since(start), timeout-5*time.Millisecond, timeout+tick+slack)

				// Let the late reply arrive (and a duplicate callback run, if there were one:
				// asyncHello reports it).
				ep.g.delay.Store(0)
				eventually(t, 2*time.Second, "the late request runs on the server", func() bool { return ep.g.calls.Load() == 2 })
				time.Sleep(2 * late)
				ep.p.SetDelay(0)

				if err := callOnce(t, ctx, kind, sp, 3, 5*time.Second); err != nil {
					t.Fatalf("call after the late reply: %v", err)
				}
				if got, want := ep.g.calls.Load(), int64(3); got != want {
					t.Fatalf("server ran %d requests, want %d", got, want)
				}
				if got := ep.p.Stats().Accepts; got != accepts {
					t.Fatalf("proxy accepted %d connections, want %d: a late reply must not cost the connection", got, accepts)
				}
			})
		}
	}
}
