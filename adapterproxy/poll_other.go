//go:build !linux

package adapterproxy

// unsent returns 0: the kernel's send queue is not read here.
func unsent(fd int) int64 { return 0 }

// unread returns 0: the kernel's receive queue is not read here.
func unread(fd int) int64 { return 0 }
