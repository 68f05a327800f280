package adapterproxy

import (
	"syscall"
	"time"
	"unsafe"
)

// waitWritable blocks until fd can take more bytes or d passes.
func waitWritable(fd int, d time.Duration) error {
	type pollFd struct {
		fd      int32
		events  int16
		revents int16
	}
	const pollOut = 0x4
	p := pollFd{fd: int32(fd), events: pollOut}
	ts := syscall.NsecToTimespec(int64(d))
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}

// unsent returns the bytes the kernel holds in fd's send queue, not yet acknowledged by the peer
// (SIOCOUTQ); 0 when it cannot tell.
func unsent(fd int) int64 {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&n)))
	if errno != 0 || n < 0 {
		return 0
	}
	return int64(n)
}

// unread returns the bytes that arrived on fd and wait in the kernel to be read (FIONREAD, TIOCINQ); 0
// when it cannot tell.
func unread(fd int) int64 {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	if errno != 0 || n < 0 {
		return 0
	}
	return int64(n)
}
