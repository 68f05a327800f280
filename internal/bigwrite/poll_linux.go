package bigwrite

import (
	"syscall"
	"time"
	"unsafe"
)

// WaitWritable blocks until fd can take more bytes, or d passes.
func WaitWritable(fd int, d time.Duration) error {
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
