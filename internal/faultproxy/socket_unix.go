//go:build unix && !linux

package faultproxy

import "syscall"

// socket returns a new IPv4 stream socket, closed on exec (set after: macOS has no
// SOCK_CLOEXEC; ForkLock keeps a fork from inheriting it in between).
func socket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	return fd, err
}
