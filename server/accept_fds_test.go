//go:build linux

package server

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// The descriptor-exhaustion tests lower RLIMIT_NOFILE, which is process-wide: they do it only in
// a child process (this test binary run again with fdChildEnv set and one test selected),
// never in the process that runs the rest of the package.

const fdChildEnv = "TARSCOMM_FDEXHAUST_CHILD"

// fdChild skips t unless this process is a child started by runFDChild.
func fdChild(t *testing.T) {
	t.Helper()
	if os.Getenv(fdChildEnv) != "1" {
		t.Skip("run in a child process by its parent test")
	}
}

// runFDChild runs the test named child in a child process and fails t with the child's
// output if the child failed.
func runFDChild(t *testing.T, child string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+child+"$", "-test.count=1", "-test.v", "-test.timeout=90s")
	cmd.Env = append(os.Environ(), fdChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+child) {
		t.Fatalf("child %s: %v\n%s", child, err, lastLines(string(out), 60))
	}
	t.Logf("child %s passed:\n%s", child, lastLines(string(out), 20))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// exhaustFDs lowers RLIMIT_NOFILE to the lowest free descriptor: every one below it is in
// use, so the process can open no descriptor. It returns a func that lets the process open n
// more (the limit raised by n) and a restore that puts the limit back (t.Cleanup calls it too).
func exhaustFDs(t *testing.T) (allow func(n int), restore func()) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	free, err := syscall.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Close(free)
	low := lim
	setRlimitCur(&low.Cur, free)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	done := false
	restore = func() {
		if done {
			return
		}
		done = true
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Errorf("restore RLIMIT_NOFILE: %v", err)
		}
	}
	t.Cleanup(restore)
	allow = func(n int) {
		more := low
		setRlimitCur(&more.Cur, free+n)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &more); err != nil {
			t.Fatal(err)
		}
	}
	return allow, restore
}

// TestAcceptOneFreed: clients wait in the listen queue of a server whose process has no
// descriptor left; one descriptor is freed (as when one of the server's connections closes),
// then the rest. Every waiting client is served, late: the accept loop holds a connection whose
// enrolling has no descriptor to spare (gnet duplicates the socket) and accepts nothing more
// until it has.
//
// Before, the single free descriptor let an accept succeed, gnet's Enroll failed with EMFILE and
// closed the connection, and the loop went on at once, without the pause it takes after a failed
// accept: every client of the queue was accepted and reset, one after the other.
func TestAcceptOneFreed(t *testing.T) {
	runFDChild(t, "TestAcceptOneFreedChild")
}

func TestAcceptOneFreedChild(t *testing.T) {
	fdChild(t)
	s, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) },
		WithNumEventLoop(1))
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	sa := &syscall.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())

	// The clients' sockets are made while descriptors are free; they connect once none is.
	const clients = 4
	var fds []int
	for range clients {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	allow, restore := exhaustFDs(t)
	for i, fd := range fds {
		if err := syscall.Connect(fd, sa); err != nil {
			t.Fatalf("client %d connect: %v", i, err)
		}
		frame := codec.AppendRequest(nil, request(int32(i+1), pbServant, "Echo", []byte("hi")))
		if _, err := syscall.Write(fd, frame); err != nil {
			t.Fatalf("client %d write: %v", i, err)
		}
	}
	waitAccept := time.Now().Add(testTimeout)
	for s.LimitStats().AcceptFailed == 0 && time.Now().Before(waitAccept) {
		time.Sleep(5 * time.Millisecond)
	}
	// One of the process's descriptors is freed, for long enough for the accept loop's next try
	// (its pause is at most a second), then all of them.
	allow(1)
	time.Sleep(1500 * time.Millisecond)
	failed := s.LimitStats().AcceptFailed
	restore()
	t.Logf("accept failures counted: %d", failed)

	served := 0
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "client")
		c, err := net.FileConn(f)
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		cl := &client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}
		fr, err := cl.readFrame(testTimeout)
		_ = c.Close()
		if err != nil {
			t.Logf("client %d, queued while the server had no descriptor: %v", i, err)
			continue
		}
		rsp := new(codec.ResponsePacket)
		if err := codec.DecodeResponse(fr, rsp); err != nil || string(rsp.Buffer) != "hi" {
			t.Errorf("client %d: reply %x (%v)", i, fr, err)
			continue
		}
		served++
	}
	// The one connection the freed descriptor let in may be lost (Enroll needs a second one);
	// the others must only have waited.
	if served < clients-1 {
		t.Errorf("%d of %d clients queued while the server had no descriptor were served once descriptors were free, want at least %d: the rest were accepted and closed at once", served, clients, clients-1)
	}
	// The server does recover for new clients.
	checkEcho(dial(t, addr), 7)
}
