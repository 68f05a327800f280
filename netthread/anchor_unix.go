//go:build unix && !linux

package netthread

import "syscall"

// socketPair returns a connected pair of Unix stream sockets, both non-blocking and closed on
// exec. Systems without SOCK_CLOEXEC and SOCK_NONBLOCK (macOS) set them after: ForkLock keeps a
// fork from inheriting the sockets in between.
func socketPair() ([2]int, error) {
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return fds, err
	}
	for _, fd := range fds {
		if err := syscall.SetNonblock(fd, true); err != nil {
			_ = syscall.Close(fds[0])
			_ = syscall.Close(fds[1])
			return [2]int{}, err
		}
	}
	return fds, nil
}
