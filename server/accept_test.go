package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
)

// TestAcceptSurvivesEMFILE: a client that opens connections until the server's process has no
// file descriptor left gets its newest connections refused or delayed, and once it lets go the
// server serves again, on its old connections and new ones. gnet's acceptor used to treat
// accept's EMFILE as fatal and shut the whole engine down: every connection closed, the
// listener too, the server never accepted again, and Stop reported nothing. The server now
// accepts from its own listener and waits such errors out (accept.go).
//
// The test lowers RLIMIT_NOFILE of its own process (client and server share it) to a few
// dozen descriptors above those open, so that a few dozen connections exhaust it, and restores
// it before checking that a new client is served.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	s, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) },
		WithNumEventLoop(1))
	before := dial(t, addr)
	checkEcho(before, 1)

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	lim := old
	setRlimitCur(&lim.Cur, len(ents)+40)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) }) // should the test stop early
	var hostile []net.Conn
	// The hostile client dials until the descriptors run out (its own dial or the server's
	// accept fails first, depending on the order), a bounded number of times.
	failures := 0
	for i := 0; i < 400 && failures < 20; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			failures++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		hostile = append(hostile, c)
	}
	time.Sleep(200 * time.Millisecond)
	for _, c := range hostile {
		_ = c.Close()
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	t.Logf("the hostile client held %d connections", len(hostile))

	t.Logf("accept failures the server waited out: %d", s.LimitStats().AcceptFailed)
	checkEcho(before, 3) // the connection opened before the exhaustion still works
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatalf("a new client once the descriptors are free again: %v", err)
	}
	defer c.Close()
	cl := &client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}
	cl.write(codec.AppendRequest(nil, request(2, pbServant, "Echo", []byte("hi"))))
	if _, err := cl.readFrame(testTimeout); err != nil {
		t.Fatalf("a new client once the descriptors are free again: %v", err)
	}
}

// TestUnixStaleSocket: a unix server starts over a socket file a previous process left behind
// (it did not close its listener), serves, and removes its socket file on Stop; a path holding
// another kind of file is refused, and the file is kept.
func TestUnixStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	_ = old.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the stale socket file: %v", err)
	}
	u := New(WithLogger(zaptest.NewLogger(t)))
	mustHandle(t, u, pbServant, "Echo", echo)
	if _, err := u.Start("unix://" + path); err != nil {
		t.Fatalf("Start over a stale socket file: %v", err)
	}
	c, err := net.DialTimeout("unix", path, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(&client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}, 1)
	_ = c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := u.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket file after Stop: %v, want it removed", err)
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(WithLogger(zaptest.NewLogger(t))).Start("unix://" + plain); err == nil {
		t.Error("Start over a regular file: no error")
	}
	if b, err := os.ReadFile(plain); err != nil || string(b) != "keep" {
		t.Errorf("the regular file after a refused Start: %q, %v", b, err)
	}
}

// setRlimitCur sets an Rlimit's Cur, whose type is the system's (uint64 on Linux and macOS,
// int64 on FreeBSD).
func setRlimitCur[T int64 | uint64](cur *T, n int) { *cur = T(n) }
