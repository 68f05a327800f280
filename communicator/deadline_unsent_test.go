package communicator_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestExpiredInConnectBacklogNotSent: a call whose deadline passes while it waits in its
// connection's connect backlog ends with ErrTimeout and is never written. The connect takes
// 400 ms (the server's TARS authentication looks its key up slowly), the call has 100 ms, and
// the deadline sweep runs once a second, so the call is still in the backlog, past its deadline,
// when the connection opens.
//
// Before, AdapterProxy.Opened wrote the backlog at once, before the loop's sweep: the expired
// call went out with iTimeout 1 and the server ran it for a caller that had given up.
func TestExpiredInConnectBacklogNotSent(t *testing.T) {
	endToEnd(t)
	const (
		obj      = "Test.Deadline.BacklogObj"
		authWait = 400 * time.Millisecond
		callTO   = 100 * time.Millisecond
	)
	keys := func(ak string) (string, bool) {
		time.Sleep(authWait) // a slow key store: the client's connect waits for it
		return "s3cret", ak == "app"
	}
	var ran atomic.Int32
	var sentTimeout atomic.Int32
	sp := unsentRig(t, obj, " -e 1", []server.Option{server.WithAuth(keys)}, func(s *server.Server) {
		if err := s.Handle(obj, "Echo", func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			ran.Add(1)
			sentTimeout.Store(cur.Timeout)
			return append(rsp, req...), nil
		}); err != nil {
			t.Fatal(err)
		}
	}, func(cfg *conf.Config) {
		cfg.TimeoutCheckInterval = time.Second
		cfg.ConnectTimeout = 5 * time.Second
		cfg.Auth.AccessKey = "app"
		cfg.Auth.SecretKey = "s3cret"
	})

	start := time.Now()
	_, err := sp.InvokeRaw(context.Background(), "Echo", []byte("x"), servantproxy.WithTimeout(callTO))
	elapsed := time.Since(start)
	if !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("a call with %v whose connect takes %v: got %v after %v, want ErrTimeout", callTO, authWait, err, elapsed)
	}
	// A written request would reach the handler before the reply to a later call.
	if _, err := sp.InvokeRaw(context.Background(), "Echo", []byte("last")); err != nil {
		t.Fatal(err)
	}
	if n := ran.Load() - 1; n != 0 {
		t.Errorf("the call timed out (%v, after %v) in its connect backlog, yet it was written when the connection opened "+
			"%v after it began: the server ran it %d time(s), told iTimeout %d ms; an expired call must not be sent",
			callTO, elapsed.Round(time.Millisecond), authWait, n, sentTimeout.Load())
	}
}

// TestExpiredInThreadQueueNotSent: a call whose deadline passes while it waits in its net
// thread's queue is never written. A slow call keeps the thread busy (no direct path: each call
// is queued and the loop woken), and calls of 1µs are made meanwhile: by the loop's turn that
// routes them their deadlines have passed (the wakeup alone takes longer), so each ends with
// ErrTimeout and the server runs none of them.
//
// Before, nothing after prepare looked at the deadline: each was written with iTimeout 1 and
// run by the server, and ended by the next sweep.
func TestExpiredInThreadQueueNotSent(t *testing.T) {
	endToEnd(t)
	const obj = "Test.Deadline.TinyObj"
	var ran atomic.Int32
	release, started := make(chan struct{}), make(chan struct{}, 1)
	sp := unsentRig(t, obj, "", []server.Option{server.WithWorkers(4)}, func(s *server.Server) {
		if err := s.Handle(obj, "Echo", func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			ran.Add(1)
			return append(rsp, req...), nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Handle(obj, "Slow", func(ctx context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return rsp, nil
		}); err != nil {
			t.Fatal(err)
		}
	}, nil)
	if _, err := sp.InvokeRaw(context.Background(), "Echo", []byte("warm")); err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := sp.InvokeRaw(context.Background(), "Slow", nil, servantproxy.WithTimeout(time.Minute))
		slow <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow call did not reach the server in 10s")
	}
	ran.Store(0)

	const n = 20
	for i := range n {
		_, err := sp.InvokeRaw(context.Background(), "Echo", []byte("x"), servantproxy.WithTimeout(time.Microsecond))
		if !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("call %d with WithTimeout(1µs): %v, want ErrTimeout", i, err)
		}
	}
	// A written request would reach the handler meanwhile; then a last call proves the
	// connection carries calls and lets everything before it arrive.
	if _, err := sp.InvokeRaw(context.Background(), "Echo", []byte("last")); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 1 {
		t.Errorf("the server ran %d of %d calls whose 1µs deadline passed in the thread's queue (and the last call); "+
			"want the last call only: an expired call must end with ErrTimeout unsent", got, n)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatalf("slow call: %v", err)
	}
}

// unsentRig starts a server of one loop (sopts, its handlers set by setup) and a Communicator of
// one net thread (its configuration changed by tune, if given), and returns a proxy of obj to the
// server (epOpts after the endpoint's port).
func unsentRig(t *testing.T, obj, epOpts string, sopts []server.Option, setup func(*server.Server), tune func(*conf.Config)) *servantproxy.ServantProxy {
	t.Helper()
	s := server.New(append([]server.Option{server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithNumEventLoop(1)}, sopts...)...)
	setup(s)
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "server", s) })
	cfg := conf.Default()
	cfg.NetThread = 1
	if tune != nil {
		tune(&cfg)
	}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	_, port, _ := net.SplitHostPort(addr.String())
	sp := new(servantproxy.ServantProxy)
	if err := comm.StringToProxy(obj+"@tcp -h 127.0.0.1 -p "+port+epOpts, sp); err != nil {
		t.Fatal(err)
	}
	return sp
}
