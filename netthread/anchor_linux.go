package netthread

import "syscall"

// socketPair returns a connected pair of Unix stream sockets, both non-blocking and closed on
// exec, made so in one system call.
func socketPair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
}
