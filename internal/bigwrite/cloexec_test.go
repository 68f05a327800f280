package bigwrite

import (
	"context"
	"net"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// TestWriterDescriptorClosedOnExec: a Writer's duplicate of the socket is closed on exec. Before,
// it was a plain dup(2): a program that started a child process (os/exec) while a large
// write was under way gave the child the socket, which then stayed open, its peer never seeing
// the connection close, for as long as the child lived.
func TestWriterDescriptorClosedOnExec(t *testing.T) {
	defer goleak.VerifyNone(t)
	src, _ := tcpPair(t)
	raw, err := src.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var w *Writer
	var serr error
	if err := raw.Control(func(fd uintptr) { w, serr = Start(int(fd), make([]byte, 1024), 0) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(w.fd), syscall.F_GETFD, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if flags&syscall.FD_CLOEXEC == 0 {
		t.Errorf("the Writer's descriptor has flags %#x: not closed on exec", flags)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
