package faultproxy

import "syscall"

// socket returns a new IPv4 stream socket, closed on exec.
func socket() (int, error) {
	return syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
