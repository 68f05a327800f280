//go:build !linux

package sockq

// Unsent returns 0: the kernel's send queue is not read here.
func Unsent(fd int) int64 { return 0 }

// Unread returns 0: the kernel's receive queue is not read here.
func Unread(fd int) int64 { return 0 }
