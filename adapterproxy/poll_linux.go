package adapterproxy

import (
	"syscall"
	"unsafe"
)

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
