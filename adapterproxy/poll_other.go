//go:build !linux

package adapterproxy

import "time"

// waitWritable waits a little before the next write attempt (no ppoll here).
func waitWritable(fd int, d time.Duration) error {
	time.Sleep(min(d, time.Millisecond))
	return nil
}

// unsent returns 0: the kernel's send queue is not read here.
func unsent(fd int) int64 { return 0 }

// unread returns 0: the kernel's receive queue is not read here.
func unread(fd int) int64 { return 0 }
