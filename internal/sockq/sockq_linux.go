package sockq

import (
	"syscall"
	"unsafe"
)

// Unsent returns the bytes the kernel holds in fd's send queue, not yet acknowledged by the peer
// (SIOCOUTQ); 0 when it cannot tell.
func Unsent(fd int) int64 { return ioctlInt(fd, syscall.TIOCOUTQ) }

// Unread returns the bytes that arrived on fd and wait in the kernel to be read (FIONREAD,
// TIOCINQ); 0 when it cannot tell.
func Unread(fd int) int64 { return ioctlInt(fd, syscall.TIOCINQ) }

func ioctlInt(fd int, req uintptr) int64 {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&n)))
	if errno != 0 || n < 0 {
		return 0
	}
	return int64(n)
}
