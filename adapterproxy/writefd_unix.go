//go:build unix

package adapterproxy

import "syscall"

// writeFD writes b to the socket fd once (again after EINTR) and returns the bytes it took, 0
// when it took none or failed (EAGAIN: its buffer is full).
func writeFD(fd int, b []byte) int {
	for {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
}
