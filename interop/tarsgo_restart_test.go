package interop_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// startTarsGoServerGroup starts cmd/tarsgo-server in a process group of its own, so that the
// process a TarsGo graceful restart forks (which inherits the group) is killed by t.Cleanup too.
func startTarsGoServerGroup(t *testing.T, id string) *tarsgoServer {
	t.Helper()
	pb, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(path, fmt.Appendf(nil, tarsgoConfig, pb, tp), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &tarsgoServer{id: id, pbPort: pb, tarsPort: tp, out: new(lockedBuffer), exited: make(chan struct{})}
	s.cmd = exec.Command(bins.server, "-config", path, "-id", id)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := s.cmd.Process.Pid
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // the server and the process it forked
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("TarsGo server %s did not exit", id)
		}
		if t.Failed() {
			t.Logf("TarsGo server %s output:\n%s", id, s.out.String())
		}
	})
	for _, port := range []int{pb, tp} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
			if err == nil {
				_ = c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("TarsGo server %s does not listen on %d: %s", id, port, s.out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return s
}

// TestTarsGoGracefulRestart: TarsGo restarts gracefully on SIGUSR1: it forks a new
// process that inherits the listening sockets, and the old one sends each of its connections the
// packet `_reconnect_` (request id 0), stops reading them, and closes each once its calls in
// flight are answered. A TarsGo client moves to a new connection on that packet (served by the
// new process), and so does tarscomm's (adapterproxy/drain.go): a call made while the old
// process still finishes a slow call is served, and the slow call gets its reply. Before,
// tarscomm's client ignored the packet: the call was written to a connection nobody read, and
// was lost.
func TestTarsGoGracefulRestart(t *testing.T) {
	s := startTarsGoServerGroup(t, "restart")

	core, logs := observer.New(zapcore.DebugLevel)
	cfg := conf.Default()
	cfg.NetThread = 1
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	prx := new(echopb.EchoProxy)
	if err := comm.StringToProxy(tarsgoPbObj+"@"+s.pbEndpoint(), prx); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := prx.Echo(ctx, &echopb.EchoReq{Seq: 1}); err != nil {
		t.Fatalf("Echo before the restart: %v", err)
	}

	// A slow call keeps the old process's connection open through its graceful shutdown.
	slow := make(chan error, 1)
	if err := prx.AsyncSleep(ctx, &echopb.SleepReq{Ms: 3000, IgnoreDeadline: true}, func(_ *echopb.SleepRsp, err error) {
		slow <- err
	}, servantproxy.WithTimeout(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the Sleep request reaches the old process's servant

	if err := s.cmd.Process.Signal(syscall.SIGUSR1); err != nil { // TarsGo's graceful restart
		t.Fatal(err)
	}
	eventually(t, "the old TarsGo process sends `_reconnect_`", func() bool {
		return logs.FilterMessageSnippet("server asked to reconnect").Len() > 0
	})

	// The new process serves the port: a fresh connection is answered.
	fresh := new(echopb.EchoProxy)
	comm2 := newComm(t)
	if err := comm2.StringToProxy(tarsgoPbObj+"@"+s.pbEndpoint(), fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Echo(ctx, &echopb.EchoReq{Seq: 2}, servantproxy.WithTimeout(5*time.Second)); err != nil {
		t.Fatalf("Echo over a new connection after the restart: %v (the new TarsGo process should serve it)", err)
	}

	// The client that was told to reconnect: its next call should go to a new connection, as a
	// TarsGo client's does.
	_, err = prx.Echo(ctx, &echopb.EchoReq{Seq: 3}, servantproxy.WithTimeout(5*time.Second))
	if err != nil {
		t.Errorf("Echo after the server sent `_reconnect_`: %v; want it served over a new connection (TarsGo's client "+
			"reconnects on that packet; tarscomm's kept writing to the old connection, which the old process no longer reads)", err)
	}
	select {
	case err := <-slow:
		if err != nil {
			t.Errorf("the slow call the old process was serving: %v, want its reply (TarsGo answers it before closing)", err)
		}
	case <-time.After(15 * time.Second):
		t.Error("the slow call did not end within 15s")
	}
}
