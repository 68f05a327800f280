package sockq

import (
	"net"
	"runtime"
	"testing"
	"time"
)

// TestQueues: over a loopback TCP connection, bytes written and not read show in the receiver's
// Unread, and bytes the receiver cannot take (its buffer full) in the sender's Unsent.
func TestQueues(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the queues are read on Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	out, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in := <-accepted
	if in == nil {
		t.Fatal("accept failed")
	}
	defer in.Close()
	_ = in.(*net.TCPConn).SetReadBuffer(4096)

	fdOf := func(c net.Conn) (fd int) {
		raw, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Control(func(f uintptr) { fd = int(f) }); err != nil {
			t.Fatal(err)
		}
		return fd
	}
	payload := make([]byte, 8<<20)
	_ = out.SetWriteDeadline(time.Now().Add(2 * time.Second))
	n, _ := out.Write(payload) // stops when both buffers are full: the deadline ends it
	if n == 0 {
		t.Fatal("nothing written")
	}
	deadline := time.Now().Add(5 * time.Second)
	for Unread(fdOf(in)) == 0 || Unsent(fdOf(out)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after writing %d bytes nobody read: Unread(receiver) = %d, Unsent(sender) = %d; want both > 0",
				n, Unread(fdOf(in)), Unsent(fdOf(out)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := Unread(-1) + Unsent(-1); got != 0 {
		t.Errorf("queues of a bad descriptor: %d; want 0", got)
	}
}

type plainConn struct{ fd int }

func (c plainConn) Fd() int { return c.fd }

type tlsConn struct{ plainConn }

func (tlsConn) Fd() int       { return -1 }
func (c tlsConn) SockFd() int { return c.fd }

// TestFd: a connection's own descriptor, a TLS connection's socket under its records, and -1 for
// anything else.
func TestFd(t *testing.T) {
	if got := Fd(plainConn{7}); got != 7 {
		t.Errorf("Fd of a plain connection = %d; want 7", got)
	}
	if got := Fd(tlsConn{plainConn{9}}); got != 9 {
		t.Errorf("Fd of a TLS connection = %d; want its socket's, 9", got)
	}
	if got := Fd(struct{}{}); got != -1 {
		t.Errorf("Fd of something else = %d; want -1", got)
	}
}
